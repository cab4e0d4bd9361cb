//! What a sweep ran on, recorded in every shard it writes so that `merge` can tell shards of
//! one sweep from shards of another: the input files (by content hash), the swept keys and
//! values, the seeds, cycles, planners and solvers, and the coplan version. The fields are kept
//! readable, so that a refusal can say which of them differs; the fingerprint is a digest of
//! all of them, compared first.

use serde::{Deserialize, Serialize};

/// The version of coplan that wrote a shard: its results may differ from another version's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// FNV-1a, 64 bits: defined byte by byte, so the same bytes hash the same on every platform
/// and in every version (a std `Hasher` promises neither).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(PRIME))
}

/// The content hash of an input file as a shard records it.
pub fn content_hash(text: &str) -> String {
    format!("fnv1a64:{:016x}", fnv1a64(text.as_bytes()))
}

/// One `--set KEY=V1,V2,…` as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweptKey {
    /// The swept key as given (e.g. `pool.0.count`, `lemix.lambda1`).
    pub key: String,
    /// Its values as given, in order.
    pub values: Vec<String>,
}

/// Everything a sweep's rows depend on besides the code of one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepInputs {
    /// The coplan version that wrote the shard ([`VERSION`]).
    pub version: String,
    /// [`content_hash`] of the cluster file.
    pub cluster: String,
    /// [`content_hash`] of the workload file.
    pub workload: String,
    /// Every `--set`, in command-line order.
    pub sets: Vec<SweptKey>,
    /// The seeds, as `1..=10` when they are a run of consecutive numbers, else listed.
    pub seeds: String,
    /// Cycles per seed (preemption); `None` for co-location, which has none.
    pub cycles: Option<u64>,
    /// The planners run, in the order asked.
    pub planners: Vec<String>,
    /// `--solver`, when given (otherwise the workload file says, and its hash covers it).
    pub solver: Option<String>,
    /// `--event-solver`, when given.
    pub event_solver: Option<String>,
    /// `--time-limit` in seconds, the budget of each planned cycle (time-limited solves end
    /// elsewhere under another one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit: Option<String>,
}

/// Seeds in the form [`SweepInputs::seeds`] records.
pub fn seeds_text(seeds: &[u64]) -> String {
    let consecutive = seeds.windows(2).all(|w| w[0].checked_add(1) == Some(w[1]));
    match (seeds.first(), seeds.last()) {
        (Some(first), Some(last)) if consecutive && seeds.len() > 1 => format!("{first}..={last}"),
        _ => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// The seeds of a [`seeds_text`] (`None` when it is not one).
pub fn parse_seeds(text: &str) -> Option<Vec<u64>> {
    if let Some((first, last)) = text.split_once("..=") {
        let (first, last): (u64, u64) = (first.parse().ok()?, last.parse().ok()?);
        return (first <= last).then(|| (first..=last).collect());
    }
    if text.is_empty() {
        return Some(Vec::new());
    }
    text.split(',').map(|s| s.parse().ok()).collect()
}

impl SweepInputs {
    /// The digest of every field: equal inputs, equal fingerprints, on any machine.
    pub fn fingerprint(&self) -> String {
        // Each field length-prefixed, so that no two different inputs give the same text.
        let mut canonical = String::new();
        let mut field = |text: &str| {
            canonical.push_str(&format!("{}:{text};", text.len()));
        };
        field(&self.version);
        field(&self.cluster);
        field(&self.workload);
        field(&self.sets.len().to_string());
        for set in &self.sets {
            field(&set.key);
            field(&set.values.len().to_string());
            for v in &set.values {
                field(v);
            }
        }
        field(&self.seeds);
        field(&self.cycles.map_or_else(|| "-".into(), |c| c.to_string()));
        field(&self.planners.len().to_string());
        for p in &self.planners {
            field(p);
        }
        field(self.solver.as_deref().unwrap_or("-"));
        field(self.event_solver.as_deref().unwrap_or("-"));
        // Shards written before the budget existed record none and keep their fingerprints.
        if let Some(limit) = &self.time_limit {
            field(limit);
        }
        content_hash(&canonical)
    }

    /// Each field that differs from `other`, as `(this one, the other one)` in words: "swept
    /// over alpha = 0,0.5" against "over alpha = 0,1".
    pub fn differences(&self, other: &SweepInputs) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut differ = |same: bool, mine: String, theirs: String| {
            if !same {
                out.push((mine, theirs));
            }
        };
        differ(
            self.version == other.version,
            format!("was written by coplan {}", self.version),
            format!("by coplan {}", other.version),
        );
        differ(
            self.cluster == other.cluster,
            format!("read a cluster file with hash {}", self.cluster),
            format!("one with hash {}", other.cluster),
        );
        differ(
            self.workload == other.workload,
            format!("read a workload file with hash {}", self.workload),
            format!("one with hash {}", other.workload),
        );
        differ(
            self.sets == other.sets,
            format!("was swept over {}", sets_text(&self.sets)),
            format!("over {}", sets_text(&other.sets)),
        );
        differ(
            self.seeds == other.seeds,
            format!("ran seeds {}", self.seeds),
            format!("seeds {}", other.seeds),
        );
        differ(
            self.cycles == other.cycles,
            format!("ran {} cycles", optional(self.cycles)),
            format!("{} cycles", optional(other.cycles)),
        );
        differ(
            self.planners == other.planners,
            format!("ran planners {}", self.planners.join(",")),
            format!("planners {}", other.planners.join(",")),
        );
        differ(
            self.solver == other.solver,
            format!("used --solver {}", optional(self.solver.as_ref())),
            format!("--solver {}", optional(other.solver.as_ref())),
        );
        differ(
            self.event_solver == other.event_solver,
            format!(
                "used --event-solver {}",
                optional(self.event_solver.as_ref())
            ),
            format!("--event-solver {}", optional(other.event_solver.as_ref())),
        );
        differ(
            self.time_limit == other.time_limit,
            format!("used --time-limit {}", optional(self.time_limit.as_ref())),
            format!("--time-limit {}", optional(other.time_limit.as_ref())),
        );
        out
    }
}

fn optional<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "(not given)".into(), |v| v.to_string())
}

/// `alpha = 0,0.5; pool.0.count = 2,4`.
fn sets_text(sets: &[SweptKey]) -> String {
    if sets.is_empty() {
        return "no keys".into();
    }
    sets.iter()
        .map(|s| format!("{} = {}", s.key, s.values.join(",")))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_published_test_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn seeds_round_trip() {
        for seeds in [vec![], vec![3], vec![1, 2, 3], vec![2, 5, 9]] {
            assert_eq!(parse_seeds(&seeds_text(&seeds)), Some(seeds.clone()));
        }
        assert_eq!(seeds_text(&[1, 2, 3, 4]), "1..=4");
        assert_eq!(parse_seeds("x"), None);
    }

    #[test]
    fn a_different_value_changes_the_fingerprint_and_is_named() {
        let a = SweepInputs {
            version: VERSION.into(),
            cluster: content_hash("c"),
            workload: content_hash("w"),
            sets: vec![SweptKey {
                key: "flextopo.alpha".into(),
                values: vec!["0".into(), "1".into()],
            }],
            seeds: "1..=2".into(),
            cycles: Some(2),
            planners: vec!["k8s-default".into()],
            solver: None,
            event_solver: None,
            time_limit: Some("10".into()),
        };
        let mut b = a.clone();
        b.sets[0].values[1] = "0.5".into();
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.fingerprint(), a.clone().fingerprint());
        assert_eq!(
            b.differences(&a),
            vec![(
                "was swept over flextopo.alpha = 0,0.5".to_string(),
                "over flextopo.alpha = 0,1".to_string()
            )]
        );
    }
}
