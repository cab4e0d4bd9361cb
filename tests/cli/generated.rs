//! The reproducers of the invalid corpus too large to keep as files: each input is written at
//! test time into a scratch folder, run through the binary, and must end in exit 2 with a
//! located diagnostic (or, where the answer is a plan, exit 0). Their transcripts are
//! snapshotted with the scratch folder written as `{tmp}`. How fast each is answered is
//! measured by `scripts/hardening-check.sh`, not here.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::support::{run, snapshot};

/// A scratch folder of this test binary's own, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("coplan-generated-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// Runs coplan, checks exit 2 with the named file located (`file:line:column`) and no panic,
/// and snapshots the transcript cut to its first `keep` lines and last 3 (the diagnostics of a
/// many-error file are alike).
fn refused(name: &str, dir: &std::path::Path, args: &[String], located: &str, keep: usize) {
    let (code, stdout, stderr) = run(args);
    let tmp = dir.display().to_string();
    let shown: Vec<&str> = stderr.lines().collect();
    let cut = if shown.len() > keep + 3 {
        let mut lines = shown[..keep].to_vec();
        lines.push("[…]");
        lines.extend_from_slice(&shown[shown.len() - 3..]);
        lines.join("\n")
    } else {
        stderr.trim_end().to_string()
    };
    let transcript = format!(
        "$ coplan {}\nexit: {code}\n--- stdout\n{stdout}--- stderr ({} lines)\n{cut}\n",
        args.join(" "),
        shown.len()
    )
    .replace(&tmp, "{tmp}");
    assert_eq!(code, 2, "{name} must exit 2:\n{transcript}");
    assert!(!transcript.contains("panicked"), "{name}:\n{transcript}");
    assert!(
        stderr.contains(&format!("{tmp}/{located}:")),
        "{name}: the diagnostic must locate {located}:\n{transcript}"
    );
    snapshot(&format!("generated__{name}"), &transcript);
    let _ = std::fs::remove_dir_all(dir);
}

fn arg(s: impl Into<String>) -> String {
    s.into()
}

/// Writes `text` as `name` in `dir`; its path as an argument.
fn input(dir: &Path, name: &str, text: &str) -> String {
    let file = dir.join(name);
    std::fs::write(&file, text).expect("write");
    file.display().to_string()
}

/// `--out-cluster DIR/c.toml --out-workload DIR/w.toml`.
fn spec_outputs(dir: &Path) -> [String; 4] {
    [
        arg("--out-cluster"),
        dir.join("c.toml").display().to_string(),
        arg("--out-workload"),
        dir.join("w.toml").display().to_string(),
    ]
}

const TINY_CLUSTER: &str = "tests/fixtures/valid/tiny-cluster.toml";

const WORKLOAD_HEAD: &str =
    "kind = \"preemption\"\n[[workload]]\nname = \"b\"\npriority = 1\ngpus = 1\ncores = 1\n";

#[test]
fn a_syntax_error_at_column_70_000_is_drawn_as_a_window() {
    let dir = scratch("long-line");
    let text = format!(
        "kind = \"cluster\"\nname = \"{}\" junk\n",
        "a".repeat(70_000)
    );
    let file = input(&dir, "long-line.toml", &text);
    refused(
        "toml-line-of-70-kb",
        &dir,
        &[arg("validate"), file],
        "long-line.toml",
        40,
    );
}

#[test]
fn a_value_error_at_column_70_000_is_drawn_as_a_window() {
    let dir = scratch("long-value");
    let cluster =
        std::fs::read_to_string(crate::common::root().join(TINY_CLUSTER)).expect("fixture");
    let text = cluster.replace(
        "gpu_numa = [0, 1, 2, 3]",
        &format!("gpu_numa = [{}0, 1, 2, 9]", " ".repeat(70_000)),
    );
    let file = input(&dir, "long-value.toml", &text);
    refused(
        "toml-value-at-column-70-kb",
        &dir,
        &[arg("validate"), file],
        "long-value.toml",
        40,
    );
}

#[test]
fn a_one_line_export_with_an_error_past_column_65_535_is_located() {
    let dir = scratch("one-line-json");
    let mut text = String::from("{\"kind\":\"List\",\"items\":[");
    for _ in 0..3_000 {
        text.push_str("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}},");
    }
    text.push_str("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}");
    let file = input(&dir, "one-line.json", &text);
    refused(
        "k8s-one-line-json-cut-at-120-kb",
        &dir,
        &[&[arg("import"), arg("k8s"), file][..], &spec_outputs(&dir)].concat(),
        "one-line.json",
        40,
    );
}

#[test]
fn a_trace_row_of_70_kb_is_located_and_its_value_cut() {
    let dir = scratch("long-row");
    let text = format!(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,{},x\n",
        "1".repeat(70_000)
    );
    let file = input(&dir, "long-row.csv", &text);
    refused(
        "azure-row-of-70-kb",
        &dir,
        &[
            arg("import"),
            arg("azure-llm"),
            file,
            arg("--out"),
            dir.join("w.toml").display().to_string(),
        ],
        "long-row.csv",
        40,
    );
}

#[test]
fn twenty_thousand_errors_draw_the_first_hundred_and_count_the_rest() {
    let dir = scratch("many-errors");
    let mut text = String::from(WORKLOAD_HEAD);
    for i in 0..20_000 {
        let _ = write!(
            text,
            "[[running]]\nworkload = \"nope{i}\"\nnode = \"tiny-0\"\n"
        );
    }
    let file = input(&dir, "many-errors.toml", &text);
    let args = [arg("validate"), arg(TINY_CLUSTER), file];
    let (_, _, stderr) = run(&args);
    assert_eq!(
        stderr.matches("spec::undefined-reference").count(),
        100,
        "the first 100 errors are drawn"
    );
    assert!(stderr.contains("… and 19900 more errors in"), "{stderr}");
    assert!(stderr.contains("20000 errors"), "{stderr}");
    refused(
        "twenty-thousand-errors",
        &dir,
        &args,
        "many-errors.toml",
        24,
    );
}

#[test]
fn a_cores_list_of_8_000_repeated_ids_is_drawn_in_bounded_text() {
    let dir = scratch("repeated-ids");
    let text = format!(
        "{WORKLOAD_HEAD}[[running]]\nworkload = \"b\"\nnode = \"tiny-0\"\ncores = [{}0]\n",
        "0, ".repeat(8_000)
    );
    let file = input(&dir, "repeated-ids.toml", &text);
    let args = [arg("validate"), arg(TINY_CLUSTER), file];
    let (_, _, stderr) = run(&args);
    assert!(
        stderr.len() < 200_000,
        "the diagnostics of a 24 KB file are {} bytes",
        stderr.len()
    );
    refused("repeated-core-ids", &dir, &args, "repeated-ids.toml", 24);
}

#[test]
fn a_node_list_of_100_001_servers_is_refused_at_the_row_past_the_limit() {
    let dir = scratch("nodes");
    let mut text = String::from("sn,cpu_milli,memory_mib,gpu,model\n");
    for i in 0..100_001 {
        let _ = writeln!(text, "node-{i},96000,786432,8,G2");
    }
    let nodes = input(&dir, "nodes.csv", &text);
    refused(
        "alibaba-nodes-above-the-server-limit",
        &dir,
        &[
            &[
                arg("import"),
                arg("alibaba-openb"),
                nodes,
                arg("tests/fixtures/import/valid/alibaba-pods.csv"),
            ][..],
            &spec_outputs(&dir),
        ]
        .concat(),
        "nodes.csv",
        40,
    );
}

#[test]
fn a_spec_file_above_its_limit_is_refused_by_its_size() {
    let dir = scratch("large-spec");
    let file = dir.join("large.toml");
    // A sparse file: its size is the limit plus one, and nothing of it needs to be read.
    let f = std::fs::File::create(&file).expect("create");
    f.set_len((64 << 20) + 1).expect("size");
    let (code, _, stderr) = run(&[arg("validate"), file.display().to_string()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is larger than 64 MiB"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn control_characters_in_names_are_escaped_in_tables() {
    let dir = scratch("escapes");
    let text = format!(
        "{}[[preempt]]\nworkload = \"b\\u001b[31mRED\"\ncount = 1\n",
        WORKLOAD_HEAD.replace("name = \"b\"", "name = \"b\\u001b[31mRED\"")
    );
    let file = input(&dir, "escapes.toml", &text);
    let (code, stdout, stderr) = run(&[
        arg("plan"),
        arg(TINY_CLUSTER),
        file.clone(),
        arg("--planners"),
        arg("k8s-default"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains('\u{1b}'), "a raw escape reached the table");
    assert!(stdout.contains("b\\u{1b}[31mRED"), "{stdout}");
    // The JSON carries the name exactly, in JSON's own escape.
    let (_, json, _) = run(&[
        arg("plan"),
        arg(TINY_CLUSTER),
        file,
        arg("--planners"),
        arg("k8s-default"),
        arg("--format"),
        arg("json"),
    ]);
    assert!(json.contains("b\\u001b[31mRED"), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_node_advertising_2_32_gpus_keeps_the_64_a_server_holds() {
    let dir = scratch("many-gpus");
    let text = r#"{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node",
   "metadata": {"name": "node-b", "labels": {"nvidia.com/gpu.product": "NVIDIA-L4"}},
   "status": {"allocatable": {"cpu": "32", "nvidia.com/gpu": "4294967295"}}}
]}"#;
    let export = input(&dir, "nodes.json", text);
    let (code, _, stderr) = run(&[
        &[arg("import"), arg("k8s"), export][..],
        &spec_outputs(&dir),
    ]
    .concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("advertises more than 64 devices"),
        "{stderr}"
    );
    let cluster = std::fs::read_to_string(dir.join("c.toml")).expect("the cluster is written");
    let gpus = cluster
        .lines()
        .find_map(|l| l.strip_prefix("gpu_numa = "))
        .map_or(0, |list| list.split(',').count());
    assert_eq!(gpus, 64, "{cluster}");
    let _ = std::fs::remove_dir_all(&dir);
}
