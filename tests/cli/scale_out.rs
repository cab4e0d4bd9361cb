//! The scale-out examples against the image the Dockerfile builds: the image is a locked
//! release build that carries `examples/`, every spec the Indexed Job and the Slurm array read
//! exists where they read it, the Job's shard count is its completion count, and no path
//! assumes a folder inside a ConfigMap mount (a ConfigMap volume is flat). Read as text and
//! YAML only: no container engine, no network.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Logical lines of a shell script or a Dockerfile: backslash continuations joined, comment
/// lines dropped.
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                if !current.trim().is_empty() {
                    lines.push(current.trim().to_string());
                }
                current.clear();
            }
        }
    }
    lines
}

/// One stage of the Dockerfile: its instructions as (keyword, rest of the line).
type Stage = Vec<(String, String)>;

fn stages(dockerfile: &str) -> Vec<Stage> {
    let mut stages: Vec<Stage> = Vec::new();
    for line in logical_lines(dockerfile) {
        let (keyword, rest) = line.split_once(char::is_whitespace).unwrap_or((&line, ""));
        let keyword = keyword.to_ascii_uppercase();
        if keyword == "FROM" {
            stages.push(Vec::new());
        }
        if let Some(stage) = stages.last_mut() {
            stage.push((keyword, rest.trim().to_string()));
        }
    }
    stages
}

/// The runtime image, as far as the examples depend on it.
struct Image {
    workdir: String,
    /// `COPY` from the build context: (repository path, image path).
    copies: Vec<(String, String)>,
    /// `COPY --from=…` out of another stage: the image paths.
    built: Vec<String>,
    /// `USER uid:gid`.
    user: (u32, u32),
}

impl Image {
    fn from_dockerfile(text: &str) -> Image {
        let last = stages(text).pop().expect("a FROM");
        let mut image = Image {
            workdir: "/".into(),
            copies: Vec::new(),
            built: Vec::new(),
            user: (0, 0),
        };
        for (keyword, rest) in last {
            let words: Vec<&str> = rest.split_whitespace().collect();
            match keyword.as_str() {
                "WORKDIR" => image.workdir = rest.clone(),
                "USER" => {
                    let (uid, gid) = rest.split_once(':').unwrap_or((&rest, &rest));
                    // Kubernetes checks runAsNonRoot against a numeric user only.
                    let numeric = |s: &str| -> u32 {
                        s.parse()
                            .unwrap_or_else(|_| panic!("USER {rest}: numeric ids expected"))
                    };
                    image.user = (numeric(uid), numeric(gid));
                }
                "COPY" if words.iter().any(|w| w.starts_with("--from=")) => {
                    image
                        .built
                        .push(words.last().expect("a destination").to_string());
                }
                "COPY" => {
                    let (dest, sources) = words.split_last().expect("a destination");
                    for source in sources.iter().filter(|w| !w.starts_with("--")) {
                        let source = source.trim_end_matches('/').to_string();
                        image
                            .copies
                            .push((source, dest.trim_end_matches('/').to_string()));
                    }
                }
                _ => {}
            }
        }
        image
    }

    /// The repository file behind a path the image's user reads, absolute or relative to the
    /// working directory.
    fn source_of(&self, path: &str) -> Option<PathBuf> {
        let absolute = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("{}/{path}", self.workdir.trim_end_matches('/'))
        };
        self.copies.iter().find_map(|(source, dest)| {
            let rest = absolute.strip_prefix(dest.as_str())?.strip_prefix('/')?;
            Some(root().join(source).join(rest))
        })
    }
}

fn image() -> Image {
    Image::from_dockerfile(&read("Dockerfile"))
}

#[test]
fn the_dockerfile_builds_locked_release_and_ships_the_binary_and_the_examples() {
    let text = read("Dockerfile");
    let stages = stages(&text);
    assert!(stages.len() >= 2, "a build stage and a runtime stage");
    let builds: Vec<&String> = stages
        .iter()
        .flatten()
        .filter(|(keyword, rest)| keyword == "RUN" && rest.contains("cargo build"))
        .map(|(_, rest)| rest)
        .collect();
    assert!(!builds.is_empty(), "the image is built by cargo");
    for build in builds {
        assert!(
            build.contains("--release") && build.contains("--locked"),
            "every build is a release build of the locked dependencies: {build}"
        );
    }

    let image = image();
    assert!(image.built.contains(&"/usr/local/bin/coplan".to_string()));
    assert!(
        image.copies.iter().any(|(source, _)| source == "examples"),
        "examples/ is in the runtime image: {:?}",
        image.copies
    );
    assert_ne!(image.user.0, 0, "the image runs as a non-root user");

    // Whatever the image copies from the build context must not be left out of it.
    let ignored: Vec<String> = read(".dockerignore")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.trim_end_matches('/').to_string())
        .collect();
    let sources = stages.iter().flatten().filter_map(|(keyword, rest)| {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let from_stage = words.iter().any(|w| w.starts_with("--from="));
        (keyword == "COPY" && !from_stage).then(|| words[..words.len() - 1].to_vec())
    });
    for source in sources.flatten() {
        assert!(
            root().join(source).exists(),
            "COPY {source}: not in the repository"
        );
        assert!(
            !ignored.iter().any(|i| i == source.trim_end_matches('/')),
            "COPY {source}, but .dockerignore leaves it out"
        );
    }
}

/// The sweep's arguments, with the `coplan` program first.
fn job_command(container: &Value) -> Vec<String> {
    let strings = |key: &str| -> Vec<String> {
        container[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().expect("strings").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    [strings("command"), strings("args")].concat()
}

fn value_after<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args
        .iter()
        .position(|a| a == flag)
        .unwrap_or_else(|| panic!("{flag} in {args:?}"));
    &args[i + 1]
}

#[test]
fn the_indexed_job_reads_specs_that_exist_and_shards_by_its_completions() {
    let job: Value = serde_saphyr::from_str(&read("examples/scale-out/indexed-job.yaml"))
        .expect("the Job is valid YAML");
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    let pod = &job["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let args = job_command(container);
    assert_eq!(args[..2], ["coplan", "sweep"], "{args:?}");

    let completions = job["spec"]["completions"].as_u64().expect("completions");
    let shards: u64 = value_after(&args, "--shards").parse().expect("a number");
    assert_eq!(shards, completions, "--shards must equal .spec.completions");

    // Every mount with the volume behind it: what a path may name depends on the kind.
    let volume = |name: &Value| {
        pod["volumes"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["name"] == *name))
            .unwrap_or_else(|| panic!("volume {name}"))
            .clone()
    };
    let mounts: Vec<(String, Value)> = container["volumeMounts"]
        .as_array()
        .expect("volume mounts")
        .iter()
        .map(|m| {
            (
                m["mountPath"].as_str().expect("a path").to_string(),
                volume(&m["name"]),
            )
        })
        .collect();

    // A ConfigMap volume holds its keys as files at the mount point; only `items` make folders.
    for (mount, volume) in mounts.iter().filter(|(_, v)| v.get("configMap").is_some()) {
        let items: Vec<&str> = volume["configMap"]["items"]
            .as_array()
            .map(|is| is.iter().filter_map(|i| i["path"].as_str()).collect())
            .unwrap_or_default();
        for arg in &args {
            let Some(file) = arg.strip_prefix(&format!("{mount}/")) else {
                continue;
            };
            assert!(
                items.contains(&file) || (items.is_empty() && !file.contains('/')),
                "{arg}: a ConfigMap mounted at {mount} has no such file"
            );
        }
    }

    // The rest of the specs are the ones baked into the image.
    let image = image();
    let in_config_map = |arg: &str| {
        mounts.iter().any(|(mount, volume)| {
            volume.get("configMap").is_some() && arg.starts_with(&format!("{mount}/"))
        })
    };
    let specs: Vec<&String> = args.iter().filter(|a| a.ends_with(".toml")).collect();
    assert_eq!(specs.len(), 2, "a cluster and a workload: {args:?}");
    for spec in specs.into_iter().filter(|s| !in_config_map(s)) {
        let source = image
            .source_of(spec)
            .unwrap_or_else(|| panic!("{spec} is not in the image"));
        assert!(source.is_file(), "{spec} → {} is missing", source.display());
    }

    let out = value_after(&args, "--out");
    assert!(
        out.contains("$(JOB_COMPLETION_INDEX)"),
        "one file per shard: {out}"
    );
    let out_dir = Path::new(out).parent().expect("a folder").to_str().unwrap();
    let (_, results) = mounts
        .iter()
        .find(|(mount, _)| mount == out_dir)
        .unwrap_or_else(|| panic!("{out_dir} is not a mounted volume"));
    assert!(
        results.get("persistentVolumeClaim").is_some(),
        "the shards outlive the pods: {results}"
    );

    // The image's user writes the results: not root, and the claim's group is the image's.
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["fsGroup"], image.user.1,
        "fsGroup is the image's group"
    );
}

#[test]
fn the_slurm_array_reads_specs_that_exist_in_a_checkout_and_in_the_image() {
    let text = read("examples/scale-out/slurm-array.sh");
    let lines = logical_lines(&text);
    // specs="${COPLAN_SPECS:-examples}": a checkout's folder unless the image's is named.
    let default = lines
        .iter()
        .find_map(|l| l.strip_prefix("specs=\"${COPLAN_SPECS:-"))
        .and_then(|rest| rest.strip_suffix("}\""))
        .expect("specs=\"${COPLAN_SPECS:-…}\"");
    let in_image: Vec<&str> = text
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("COPLAN_SPECS="))
        .collect();
    assert!(
        !in_image.is_empty(),
        "the header shows how to read the image's specs"
    );

    let sweep = lines
        .iter()
        .find(|l| l.contains(" sweep "))
        .expect("a sweep command");
    let specs: Vec<&str> = sweep
        .split_whitespace()
        .map(|w| w.trim_matches('"'))
        .filter(|w| w.ends_with(".toml"))
        .collect();
    assert_eq!(specs.len(), 2, "a cluster and a workload: {sweep}");

    let image = image();
    for spec in specs {
        let rel = spec
            .strip_prefix("$specs/")
            .unwrap_or_else(|| panic!("{spec}: read from $specs"));
        let in_checkout = root().join(default).join(rel);
        assert!(in_checkout.is_file(), "{}", in_checkout.display());
        for folder in &in_image {
            let path = format!("{folder}/{rel}");
            let source = image
                .source_of(&path)
                .unwrap_or_else(|| panic!("{path} is not in the image"));
            assert!(source.is_file(), "{path} → {} is missing", source.display());
        }
    }
}
