//! Whether two outputs pair up seed by seed: what refuses the comparison (kinds, seeds,
//! planners) and what it only notes (cluster, workload, cycles).

use std::collections::BTreeSet;

use super::error::Difference;
use super::input::SimulationInput;

fn names<T>(items: &[T], name: impl Fn(&T) -> &str) -> BTreeSet<String> {
    items.iter().map(|i| name(i).to_string()).collect()
}

/// What makes the outputs incomparable; empty when they pair up.
pub(super) fn differences(a: &SimulationInput, b: &SimulationInput) -> Vec<Difference> {
    let mut out = Vec::new();
    if a.workload_kind() != b.workload_kind() {
        out.push(Difference::WorkloadKind {
            a: a.workload_kind().into(),
            b: b.workload_kind().into(),
        });
    }
    let (sa, sb): (BTreeSet<u64>, BTreeSet<u64>) = (
        a.seeds.iter().copied().collect(),
        b.seeds.iter().copied().collect(),
    );
    if sa != sb {
        out.push(Difference::Seeds {
            a: a.seeds.clone(),
            b: b.seeds.clone(),
        });
    }
    let (pa, pb) = (
        names(&a.planners, |p| &p.name),
        names(&b.planners, |p| &p.name),
    );
    if pa != pb {
        out.push(Difference::Planners {
            only_a: pa.difference(&pb).cloned().collect(),
            only_b: pb.difference(&pa).cloned().collect(),
        });
    }
    out
}

/// Differences the comparison allows, as notes.
pub(super) fn allowed_differences(a: &SimulationInput, b: &SimulationInput) -> Vec<String> {
    let mut notes = Vec::new();
    if a.cluster != b.cluster {
        notes.push(format!(
            "the clusters differ: A ran on `{}`, B on `{}`",
            a.cluster, b.cluster
        ));
    }
    if a.workload != b.workload {
        let name = |w: &Option<String>| w.as_ref().map_or("(unnamed)".into(), |w| format!("`{w}`"));
        notes.push(format!(
            "the workloads differ: A is {}, B is {}",
            name(&a.workload),
            name(&b.workload)
        ));
    }
    if a.cycles != b.cycles {
        let cycles = |c: Option<u64>| c.map_or("no".into(), |c| c.to_string());
        notes.push(format!(
            "the cycles per seed differ: A has {}, B has {}",
            cycles(a.cycles),
            cycles(b.cycles)
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::super::diff;
    use super::super::test_support::{output, some};

    #[test]
    fn mismatched_seeds_planners_and_kinds_are_refused_naming_both_files() {
        let v = some(&[1.0, 2.0, 3.0]);
        let a = output("a.json", &[1, 2, 3], &["p", "q"], &[("victims", &v)]);
        let b = output("b.json", &[1, 2], &["p"], &[("victims", &v[..2])]);
        let e = diff(&a, &b, &[]).expect_err("mismatch");
        let text = e.to_string();
        assert!(text.contains("`a.json` (A) and `b.json` (B)"), "{text}");
        assert!(
            text.contains("seeds: A has 3 (1-3), B has 2 (1-2); only in A: 3"),
            "{text}"
        );
        assert!(text.contains("planners: only in A: q"), "{text}");
        let mut c = a.clone();
        c.workload_kind = Some("colocation".into());
        let text = diff(&a, &c, &[]).expect_err("kinds").to_string();
        assert!(
            text.contains("workload kinds: A is preemption, B is colocation"),
            "{text}"
        );
    }
}
