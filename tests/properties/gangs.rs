//! Gangs on random racked clusters (DESIGN §12.3): every plan verifies; every gang-aware plan
//! keeps each gang whole and inside one domain of its required level; no planner scores below
//! a proven `ilp-batch`, nor any decision below the per-event optimum on the state it faced.

use coplan::plan::PlanStatus;
use coplan::plan::preemption::EventOutcome;
use coplan::preempt::planning::{PlanOptions, plan};
use coplan::spec::{ClusterSpec, PreemptionSpec};
use coplan::topology::Cluster;
use proptest::prelude::*;

use crate::common::{cases, proptest_config};

const GANG_AWARE: [&str; 5] = [
    "kueue-tas",
    "flextopo-imp",
    "flextopo-exhaustive",
    "ilp",
    "ilp-batch",
];

/// A cluster of `racks` racks of `hosts` hosts (2 sockets × 1 NUMA node, `gpus` GPUs per
/// NUMA node, 8 cores each), in `blocks` blocks, with spread penalties.
fn cluster_toml(racks: usize, hosts: usize, gpus: usize, blocks: usize) -> String {
    let numa: Vec<String> = (0..2)
        .flat_map(|n| std::iter::repeat_n(n.to_string(), gpus))
        .collect();
    let mut text = format!(
        "kind = \"cluster\"\nname = \"random-racks\"\n\n[topology]\nlevels = [\"block\", \"rack\"]\npenalty = {{ rack = 1.05, block = 1.2, cluster = 1.5 }}\n\n[[server_type]]\nname = \"t\"\nsockets = 2\nnuma_per_socket = 1\ncores_per_numa = 8\ngpu_numa = [{}]\n",
        numa.join(", ")
    );
    for r in 0..racks {
        text.push_str(&format!(
            "\n[[pool]]\nserver_type = \"t\"\ncount = {hosts}\nname_prefix = \"r{r}-h\"\ndomain = {{ block = \"b{}\", rack = \"r{r}\" }}\n",
            r % blocks
        ));
    }
    text
}

/// Fill classes of 1 and 2 GPUs (priorities 10 and 20), and gangs of `(pods, gpus, level, qos)`.
fn workload_toml(gangs: &[(u32, u32, usize, usize)], seed: u64) -> String {
    let levels = ["host", "rack", "block", "cluster"];
    let qos = ["guaranteed", "best-effort", "none"];
    let mut text = String::from(
        "kind = \"preemption\"\n\n[[workload]]\nname = \"b1\"\npriority = 10\ngpus = 1\ncores = 2\npreemptible = true\n\n[[workload]]\nname = \"b2\"\npriority = 20\ngpus = 2\ncores = 3\npreemptible = true\n",
    );
    for (i, (_, gpus, _, q)) in gangs.iter().enumerate() {
        text.push_str(&format!(
            "\n[[workload]]\nname = \"g{i}\"\npriority = {}\ngpus = {gpus}\ncores = 2\ntopology_qos = \"{}\"\n",
            100 + 10 * i,
            qos[*q]
        ));
    }
    text.push_str(&format!(
        "\n[fill]\nmix = {{ b1 = 2.0, b2 = 1.0 }}\ntarget_gpu_utilization = 0.9\nseed = {seed}\n\n[planners]\nilp_time_limit_s = 20\n"
    ));
    for (i, (pods, _, level, _)) in gangs.iter().enumerate() {
        text.push_str(&format!(
            "\n[[preempt]]\nworkload = \"g{i}\"\npods = {pods}\nrequired_level = \"{}\"\n",
            levels[*level]
        ));
    }
    text
}

fn instance() -> impl Strategy<Value = (ClusterSpec, PreemptionSpec)> {
    (
        (1usize..=4, 1usize..=3, 1usize..=2, 1usize..=2),
        prop::collection::vec((1u32..=3, 1u32..=4, 0usize..4, 0usize..3), 1..=3),
        0u64..1000,
    )
        .prop_map(|((racks, hosts, gpus, blocks), gangs, seed)| {
            let gangs: Vec<(u32, u32, usize, usize)> = gangs
                .into_iter()
                .map(|(p, g, l, q)| (p, g.min(2 * gpus as u32), l, q))
                .collect();
            let cluster: ClusterSpec =
                toml::from_str(&cluster_toml(racks, hosts, gpus, blocks.min(racks)))
                    .expect("cluster");
            let spec: PreemptionSpec = toml::from_str(&workload_toml(&gangs, seed)).expect("spec");
            (cluster, spec)
        })
}

proptest! {
    #![proptest_config(proptest_config(cases()))]

    #[test]
    fn gang_plans_keep_gangs_whole_and_none_beats_a_proven_optimum((cluster_spec, spec) in instance()) {
        prop_assert!(coplan::spec::validate::cluster(&cluster_spec).is_empty());
        prop_assert!(coplan::spec::validate::preemption(&spec).is_empty());
        let cluster = Cluster::from_spec(&cluster_spec);
        let report = plan(&cluster, &spec, &PlanOptions::default()).expect("plans and verifies");
        let fabric = &cluster.fabric;
        for p in &report.planners {
            let aware = GANG_AWARE.contains(&p.name.as_str());
            for e in &p.events {
                let g = e.gang.as_ref().expect("a gang event");
                if aware {
                    prop_assert!(!matches!(e.outcome, EventOutcome::Partial | EventOutcome::Split),
                        "{}: {} is {}", p.name, e.preemptor, e.outcome.as_str());
                    prop_assert!(g.pods_placed == 0 || g.pods_placed == g.pods);
                }
                if e.placed {
                    let level = fabric.level(&g.required_level).expect("a level of the cluster");
                    let domains: std::collections::BTreeSet<u32> = g
                        .placements
                        .iter()
                        .map(|pod| fabric.domain_of(level, cluster.server_id(&pod.node).expect("server")))
                        .collect();
                    prop_assert_eq!(domains.len(), 1, "{}: {} spans domains", p.name, e.preemptor);
                }
            }
            // Every decision costs at least the per-event optimum on the state it faced.
            prop_assert!(p.decision_gap.is_none_or(|g| g >= -1e-9), "{}: decision gap {:?}", p.name, p.decision_gap);
        }
        let batch = report.planners.iter().find(|p| p.name == "ilp-batch").expect("ran");
        if batch.status == PlanStatus::Optimal {
            let best = batch.objective.expect("objective");
            for p in &report.planners {
                let o = p.objective.expect("objective");
                prop_assert!(best <= o + 1e-6, "{} scores {} below the proven optimum {}", p.name, o, best);
            }
        }
        let ilp = report.planners.iter().find(|p| p.name == "ilp").expect("ran");
        prop_assert_eq!(ilp.decision_gap, Some(0.0));
    }
}
