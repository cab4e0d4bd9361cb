//! The plan → verify targets: the input bytes drive a generator of a small cluster and a
//! workload (as TOML text, so that they pass through the same loading and validation as a
//! file); the pair is planned through the session layer `coplan plan` calls, which runs the
//! independent verifier on every plan; the plans are then held to the optimum.

use std::fmt::Write;

use coplan::colocate::setup::cluster_findings;
use coplan::plan::cancel::Cancel;
use coplan::plan::{PlanStatus, PlannerRole};
use coplan::session::error::SessionError;
use coplan::session::load::{Pair, Workload};
use coplan::session::plan::{PlanResult, plan};
use coplan::spec::{self, Expect, SourceFile, Spec};
use coplan::topology::Cluster;

use crate::verdict::Verdict::{self, Finding, Fine};

/// Reads choices from the input; past its end every choice is the first one, so a short input
/// is a small instance.
struct Choices<'a> {
    data: &'a [u8],
    at: usize,
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A value in `lo..=hi`.
    fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + u32::from(self.byte()) % (hi - lo + 1)
    }

    fn pick<'s>(&mut self, options: &[&'s str]) -> &'s str {
        options[usize::from(self.byte()) % options.len()]
    }

    fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }
}

const SERVER_TYPES: [&str; 3] = ["rtx4090-8g", "a100-8g", "gpu-2s4n8g"];

/// One exact planner run in this many plans: the heuristics run on every one, the exact
/// references (`ilp`, `ilp-batch`) on a deterministic sample chosen by the input.
pub const EXACT_ONE_IN: u8 = 8;

/// A cluster of 1 to 4 servers in one or two pools; returns the text and the server names.
fn cluster_text(c: &mut Choices<'_>, types: &[&str]) -> (String, Vec<String>) {
    let mut text = String::from("kind = \"cluster\"\nname = \"gen\"\n");
    let mut names = Vec::new();
    let pools = c.range(1, 2);
    for p in 0..pools {
        let count = c.range(1, 2);
        let t = c.pick(types);
        let _ = write!(
            text,
            "\n[[pool]]\nserver_type = \"{t}\"\ncount = {count}\nname_prefix = \"p{p}-\"\n"
        );
        names.extend((0..count).map(|i| format!("p{p}-{i}")));
    }
    (text, names)
}

fn load(cluster_text: &str, workload_text: &str) -> Result<(Cluster, spec::LoadedSpec), Verdict> {
    let cluster = match spec::load(
        SourceFile::new("gen-cluster.toml", cluster_text),
        Expect::Cluster,
    ) {
        Ok(l) => match l.spec {
            Spec::Cluster(c) => Cluster::from_spec(&c),
            _ => return Err(Finding("a generated cluster loaded as a workload".into())),
        },
        Err(e) => {
            return Err(Finding(format!(
                "a generated cluster does not validate: {}",
                e.issues.first().map_or("", |i| i.message.as_str())
            )));
        }
    };
    match spec::load(
        SourceFile::new("gen-workload.toml", workload_text),
        Expect::Workload,
    ) {
        Ok(l) => Ok((cluster, l)),
        // The generator may ask for what validation refuses (a pod bigger than a server): a
        // clean input error is a fine outcome, as it would be for a user.
        Err(e) => Err(Fine(format!(
            "invalid:{}",
            e.issues.first().map_or("", |i| i.code)
        ))),
    }
}

fn session_outcome(e: &SessionError) -> Verdict {
    match e {
        SessionError::Internal(m) => Finding(format!("internal error: {m}")),
        SessionError::Invalid(v) => Fine(format!(
            "invalid:{}",
            v.first()
                .and_then(|i| i.issues.first())
                .map_or("", |i| i.code)
        )),
        SessionError::Input { .. } => Fine("input".into()),
        // Nothing asks a fuzz run to stop: a stop it did not ask for is a bug.
        SessionError::Interrupted(m) => Finding(format!("interrupted unasked: {m}")),
        // A requirement the run enforced (none here) is the outcome's verdict, not a fault.
        SessionError::Infeasible(_) => Fine("infeasible".into()),
    }
}

/// The preemption workload text.
fn preemption_text(c: &mut Choices<'_>, servers: &[String], exact: bool) -> String {
    let mut text = String::from("kind = \"preemption\"\n");
    let classes = c.range(2, 4);
    for k in 0..classes {
        let priority = [1, 10, 50, 100, 1000][usize::from(c.byte()) % 5];
        // The fill classes (all but the last) hold a GPU: a fill of CPU-only pods puts
        // hundreds of one-core victims on a server, where FlexTopo's budgeted enumeration
        // takes seconds per event, too slow for a fuzz execution.
        let gpus = c.range(u32::from(k + 1 < classes), 4);
        let cores = c.range(if gpus == 0 { 1 } else { 0 }, 12);
        let qos = c.pick(&["none", "guaranteed", "best-effort"]);
        let preemptible = k + 1 < classes || c.flag();
        let _ = write!(
            text,
            "\n[[workload]]\nname = \"w{k}\"\npriority = {priority}\ngpus = {gpus}\ncores = {cores}\ntopology_qos = \"{qos}\"\npreemptible = {preemptible}\n"
        );
    }
    if c.flag() {
        let running = c.range(0, 6);
        for _ in 0..running {
            let w = c.range(0, classes - 1);
            let node = &servers[usize::from(c.byte()) % servers.len()];
            let _ = write!(
                text,
                "\n[[running]]\nworkload = \"w{w}\"\nnode = \"{node}\"\n"
            );
        }
    } else {
        let utilization = [0.3, 0.5, 0.75, 0.9, 1.0][usize::from(c.byte()) % 5];
        let churn = c.range(0, 2);
        let seed = c.byte();
        let _ = write!(
            text,
            "\n[fill]\ntarget_gpu_utilization = {utilization}\nchurn_rounds = {churn}\nseed = {seed}\nmix = {{ "
        );
        let mixed: Vec<String> = (0..classes.saturating_sub(1))
            .map(|k| format!("w{k} = {}", c.range(1, 4)))
            .collect();
        let _ = writeln!(text, "{} }}", mixed.join(", "));
    }
    let entries = c.range(1, 3);
    for _ in 0..entries {
        let w = c.range(0, classes - 1);
        let count = c.range(1, 2);
        let _ = write!(
            text,
            "\n[[preempt]]\nworkload = \"w{w}\"\ncount = {count}\n"
        );
    }
    if c.flag() {
        let alpha = [0.0, 0.5, 1.0][usize::from(c.byte()) % 3];
        let _ = write!(text, "\n[flextopo]\nalpha = {alpha}\n");
    }
    let mut planners = vec![
        "k8s-default",
        "k8s-nrt",
        "flextopo-imp",
        "flextopo-exhaustive",
    ];
    if exact {
        planners.extend(["ilp", "ilp-batch"]);
    }
    let _ = write!(
        text,
        "\n[planners]\nrun = [{}]\nilp_time_limit_s = 60\n",
        planners
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    text
}

/// Tolerance of an objective comparison: the objectives are sums of a few weighted terms.
fn tolerance(x: f64) -> f64 {
    1e-6 * x.abs().max(1.0)
}

/// The cluster and workload files a preemption input generates (`coplan-fuzz show`).
pub fn preemption_files(input: &[u8]) -> (String, String) {
    let mut c = Choices { data: input, at: 0 };
    let exact = c.byte().is_multiple_of(EXACT_ONE_IN);
    let (cluster_text, servers) = cluster_text(&mut c, &SERVER_TYPES);
    (cluster_text, preemption_text(&mut c, &servers, exact))
}

pub fn plan_preemption(input: &[u8]) -> Verdict {
    let mut c = Choices { data: input, at: 0 };
    let exact = c.byte().is_multiple_of(EXACT_ONE_IN);
    let (cluster_text, servers) = cluster_text(&mut c, &SERVER_TYPES);
    let workload_text = preemption_text(&mut c, &servers, exact);
    let (cluster, source) = match load(&cluster_text, &workload_text) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let Spec::Preemption(w) = &source.spec else {
        return Finding("a generated preemption workload loaded as another kind".into());
    };
    let pair = Pair {
        cluster,
        workload: Workload::Preemption(w.clone()),
        source: source.clone(),
    };
    let worst = c.flag().then_some(2);
    let result = match plan(&pair, None, None, worst.filter(|_| exact), Cancel::never()) {
        Ok(PlanResult::Preemption(r)) => r,
        Ok(PlanResult::Colocation(_)) => {
            return Finding("a preemption plan came back as co-location".into());
        }
        Err(e) => return session_outcome(&e),
    };
    // The proven optimum is the batch model's bound: its plan replayed in list order may cost
    // more (the report marks those gaps as upper bounds), so the replay is no reference.
    let optimum = result
        .planners
        .iter()
        .find(|p| p.role == PlannerRole::BatchReference && p.status == PlanStatus::Optimal)
        .and_then(|p| p.bound);
    for p in &result.planners {
        if let (Some(o), Some(x)) = (optimum, p.objective)
            && x < o - tolerance(o)
        {
            return Finding(format!(
                "`{}` scores {x} below the proven optimum {o} of `ilp-batch`",
                p.name
            ));
        }
        if let Some(d) = p.decision_gap
            && d < -1e-6
        {
            return Finding(format!(
                "`{}` has decision gap {d}: a decision better than the per-event optimum",
                p.name
            ));
        }
        if p.objective.is_some_and(|x| !x.is_finite()) {
            return Finding(format!("`{}` has a non-finite objective", p.name));
        }
    }
    Fine(if exact { "ok-exact" } else { "ok" }.into())
}

/// The co-location workload text: a handful of tasks on one or two pipeline stages.
fn colocation_text(c: &mut Choices<'_>, servers: usize, exact: bool) -> String {
    let stages = c.range(1, 2);
    let nodes = c.range(1, servers as u32);
    let mut text = format!(
        "kind = \"colocation\"\nnodes = {nodes}\n\n[model]\nname = \"gen\"\nstages = {stages}\n\
         eta_forward = 1.487e-9\ndelta_forward_s = 2.694e-3\nbeta_forward = 3.413e-5\n\
         eta_backward = 2.973e-9\ndelta_backward_s = 5.388e-3\nbeta_backward = 6.826e-5\n\
         decode_base_s = 4.848e-3\ndecode_per_token_s = 6.428e-8\n"
    );
    if c.flag() {
        let weights = [7660, 30000, 70000][usize::from(c.byte()) % 3];
        let _ = write!(
            text,
            "weights_mib = {weights}\nkv_mib_per_token = 0.0625\nactivation_mib_per_token = 2.125\n"
        );
    }
    let count = c.range(1, 6);
    text.push_str("\n[inference]\n");
    if c.flag() {
        let mut at = 0.0;
        let requests: Vec<String> = (0..count)
            .map(|_| {
                at += f64::from(c.range(0, 40)) * 0.005;
                format!(
                    "{{ arrival_s = {at}, prompt_tokens = {}, output_tokens = {} }}",
                    c.range(1, 256),
                    c.range(1, 24)
                )
            })
            .collect();
        let _ = writeln!(text, "requests = [{}]", requests.join(", "));
    } else {
        let process = c.pick(&["poisson", "uniform"]);
        let rate = [1, 5, 20, 100][usize::from(c.byte()) % 4];
        let _ = write!(
            text,
            "arrival = {{ process = \"{process}\", rate_rps = {rate} }}\n\
             prompt_tokens = {{ dist = \"{}\", mean = {}, sd = 40, max = 512 }}\n\
             output_tokens = {{ dist = \"uniform\", mean = 8, sd = 4, max = 24 }}\n",
            c.pick(&["lognormal", "constant", "uniform"]),
            c.range(8, 200)
        );
    }
    let _ = writeln!(
        text,
        "count = {count}\nslo_factor = {}",
        [1.0, 3.0, 5.0][usize::from(c.byte()) % 3]
    );
    let rate = [0.0, 0.2, 0.5][usize::from(c.byte()) % 3];
    let _ = write!(
        text,
        "\n[training]\nrate = {rate}\nbatch_size = {}\ntokens = {{ dist = \"constant\", mean = {}, max = 512 }}\n",
        c.range(1, 2),
        c.range(16, 300)
    );
    let _ = write!(
        text,
        "\n[lemix]\nchain_stages = {}\ndeprioritize = \"{}\"\nmemory_threshold = {}\non_memory_timeout = \"{}\"\nbatch_max = {}\ndecode_occupancy = {}\nqueue_order = \"{}\"\n",
        c.flag(),
        c.pick(&["lookahead", "threshold", "off"]),
        [0.8, 0.5, 1.0][usize::from(c.byte()) % 3],
        c.pick(&["offload", "drop"]),
        c.range(1, 4),
        c.flag(),
        c.pick(&["ready", "task-id"]),
    );
    let mut planners = vec!["separate", "mix-rr", "mix-luf", "lemix", "lemix-balanced"];
    if exact {
        planners.push("ilp");
    }
    let _ = write!(
        text,
        "\n[planners]\nrun = [{}]\nseed = {}\nilp_time_limit_s = 60\nilp_exact_max_tasks = {}\nilp_window = {}\n",
        planners
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(", "),
        c.byte(),
        c.range(0, 6),
        c.range(1, 3),
    );
    text
}

const COLOCATION_TYPES: [&str; 2] = ["a100-8g", "gpu-2s4n8g"];

/// The cluster and workload files a co-location input generates (`coplan-fuzz show`).
pub fn colocation_files(input: &[u8]) -> (String, String) {
    let mut c = Choices { data: input, at: 0 };
    let exact = c.byte().is_multiple_of(EXACT_ONE_IN);
    let (cluster_text, servers) = cluster_text(&mut c, &COLOCATION_TYPES);
    (cluster_text, colocation_text(&mut c, servers.len(), exact))
}

pub fn plan_colocation(input: &[u8]) -> Verdict {
    let mut c = Choices { data: input, at: 0 };
    let exact = c.byte().is_multiple_of(EXACT_ONE_IN);
    let (cluster_text, servers) = cluster_text(&mut c, &COLOCATION_TYPES);
    let workload_text = colocation_text(&mut c, servers.len(), exact);
    let (cluster, source) = match load(&cluster_text, &workload_text) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let Spec::Colocation(w) = &source.spec else {
        return Finding("a generated co-location workload loaded as another kind".into());
    };
    if let Err(e) = source.check(cluster_findings(&cluster, w)) {
        return Fine(format!(
            "invalid:{}",
            e.issues.first().map_or("", |i| i.code)
        ));
    }
    let pair = Pair {
        cluster,
        workload: Workload::Colocation {
            spec: w.clone(),
            trace: None,
        },
        source: source.clone(),
    };
    let worst = (exact && c.flag()).then_some(2);
    // The session checks every run with the verifier and holds every planner to a proven
    // optimum (a planner below it is a verification error, which is internal).
    match plan(&pair, None, None, worst, Cancel::never()) {
        Ok(PlanResult::Colocation(r)) => {
            for p in &r.planners {
                if p.objective.is_some_and(|x| !x.is_finite()) {
                    return Finding(format!("`{}` has a non-finite objective", p.name));
                }
                if let (Some(g), Some(_)) = (p.gap, r.bound)
                    && g < -1e-6
                {
                    return Finding(format!(
                        "`{}` has gap {g} against the bound from {}",
                        p.name, r.bound_source
                    ));
                }
            }
            Fine(if exact { "ok-exact" } else { "ok" }.into())
        }
        Ok(PlanResult::Preemption(_)) => {
            Finding("a co-location plan came back as preemption".into())
        }
        Err(e) => session_outcome(&e),
    }
}
