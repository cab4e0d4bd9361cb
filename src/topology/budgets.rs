//! PodDisruptionBudgets as a plan's state holds them: which running pods each budget covers
//! and how many more evictions it allows. Evicting a covered pod spends one from each of its
//! budgets; a budget spent below zero is violated. When budgets are hard
//! (`[planners] respect_pdb`), the pods of a spent budget are no longer preemptible, so no
//! planner, exact or not, can take them; the remaining case (one decision taking more pods
//! of a budget than it has left) is each planner's own check ([`BudgetLedger::allows`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::ids::PodId;
use crate::spec::preemption::{DisruptionBudget, PreemptionSpec};

/// Which budgets cover a pod, by its class and its name.
#[derive(Debug, PartialEq)]
pub struct BudgetTable {
    /// Budget names, by index.
    pub names: Vec<String>,
    by_class: BTreeMap<usize, Vec<u32>>,
    by_pod: BTreeMap<String, Vec<u32>>,
}

impl BudgetTable {
    /// The budgets of a preemption workload.
    pub fn new(spec: &PreemptionSpec) -> Self {
        let mut by_class: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
        let mut by_pod: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for (b, budget) in spec.disruption_budget.iter().enumerate() {
            let b = b as u32;
            for class in &budget.workloads {
                if let Some(w) = spec.workload.iter().position(|w| &w.name == class) {
                    push_once(by_class.entry(w).or_default(), b);
                }
            }
            for pod in &budget.pods {
                push_once(by_pod.entry(pod.clone()).or_default(), b);
            }
        }
        BudgetTable {
            names: spec
                .disruption_budget
                .iter()
                .map(|b| b.name.clone())
                .collect(),
            by_class,
            by_pod,
        }
    }

    /// The budgets covering a pod of class `workload` named `name`, ascending.
    pub fn of(&self, workload: usize, name: &str) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for list in [self.by_class.get(&workload), self.by_pod.get(name)]
            .into_iter()
            .flatten()
        {
            for &b in list {
                push_once(&mut out, b);
            }
        }
        out.sort_unstable();
        out
    }
}

fn push_once(list: &mut Vec<u32>, b: u32) {
    if !list.contains(&b) {
        list.push(b);
    }
}

/// The evictions a budget allows when `covered` pods run, as the disruption controller
/// computes `status.disruptionsAllowed` (every running pod counted healthy): the value given,
/// or covered − minAvailable, or maxUnavailable; never below 0.
pub fn disruptions_allowed(budget: &DisruptionBudget, covered: i64) -> i64 {
    let allowed = if let Some(n) = budget.disruptions_allowed {
        n
    } else if let Some(min) = &budget.min_available {
        covered - min.scaled(covered).unwrap_or(covered)
    } else if let Some(max) = &budget.max_unavailable {
        max.scaled(covered).unwrap_or(0)
    } else {
        0
    };
    allowed.max(0)
}

/// The budgets of one state: what each still allows and which live pods it covers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BudgetLedger {
    table: Option<Arc<BudgetTable>>,
    /// Per budget: evictions it still allows; below 0 once violated.
    left: Vec<i64>,
    /// Per budget: its live pods, ascending id.
    members: Vec<Vec<PodId>>,
    /// Budgets are hard: the pods of a spent budget are not preemptible.
    hard: bool,
}

impl BudgetLedger {
    /// A ledger of `table` with nothing spent and no members yet.
    pub fn new(table: Arc<BudgetTable>, hard: bool) -> Self {
        let n = table.names.len();
        BudgetLedger {
            table: Some(table),
            left: vec![0; n],
            members: vec![Vec::new(); n],
            hard,
        }
    }

    /// Whether any budget is attached.
    pub fn is_empty(&self) -> bool {
        self.left.is_empty()
    }

    /// Whether budgets are hard (`respect_pdb`).
    pub fn hard(&self) -> bool {
        self.hard
    }

    /// Budget names, by index.
    pub fn names(&self) -> &[String] {
        self.table.as_ref().map_or(&[], |t| &t.names)
    }

    /// Per budget: evictions it still allows (negative: violated by that many).
    pub fn left(&self) -> &[i64] {
        &self.left
    }

    /// The budgets covering a new pod.
    pub fn of(&self, workload: usize, name: &str) -> Vec<u32> {
        self.table
            .as_ref()
            .map_or_else(Vec::new, |t| t.of(workload, name))
    }

    /// Per budget: its live pods.
    pub fn members(&self, b: u32) -> &[PodId] {
        &self.members[b as usize]
    }

    /// Sets what each budget allows (at the start of a plan).
    pub fn set_left(&mut self, left: Vec<i64>) {
        self.left = left;
    }

    /// A pod joins its budgets.
    pub fn join(&mut self, id: PodId, budgets: &[u32]) {
        for &b in budgets {
            let m = &mut self.members[b as usize];
            if let Err(at) = m.binary_search(&id) {
                m.insert(at, id);
            }
        }
    }

    /// A pod is evicted: each of its budgets spends one. Returns the budgets that are spent
    /// now (none left) and whose pods a hard ledger must protect.
    pub fn spend(&mut self, id: PodId, budgets: &[u32]) -> Vec<u32> {
        let mut spent = Vec::new();
        for &b in budgets {
            let m = &mut self.members[b as usize];
            if let Ok(at) = m.binary_search(&id) {
                m.remove(at);
            }
            self.left[b as usize] -= 1;
            if self.hard && self.left[b as usize] <= 0 {
                spent.push(b);
            }
        }
        spent
    }

    /// Whether a pod of these budgets may be evicted under a hard ledger (every budget has
    /// one left); always under a soft one.
    pub fn may_spend(&self, budgets: &[u32]) -> bool {
        !self.hard || budgets.iter().all(|&b| self.left[b as usize] > 0)
    }

    /// Ids renumbered ([`super::state::ClusterState::renumber_pods`]).
    pub fn renumber(&mut self, renamed: &[PodId]) {
        for m in &mut self.members {
            for id in m.iter_mut() {
                *id = renamed[id.index()];
            }
        }
    }

    /// How many budgets evicting all of `victims` (each given by its budgets) would leave
    /// below zero (or further below, for one already violated).
    pub fn violated_by<'a>(&self, victims: impl IntoIterator<Item = &'a [u32]>) -> usize {
        let mut spent: BTreeMap<u32, i64> = BTreeMap::new();
        for budgets in victims {
            for &b in budgets {
                *spent.entry(b).or_default() += 1;
            }
        }
        spent
            .iter()
            .filter(|&(&b, &n)| n > self.left[b as usize])
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::preemption::IntOrPercent;

    fn budget(
        allowed: Option<i64>,
        min: Option<IntOrPercent>,
        max: Option<IntOrPercent>,
    ) -> DisruptionBudget {
        DisruptionBudget {
            name: "b".into(),
            pods: Vec::new(),
            workloads: vec!["w".into()],
            disruptions_allowed: allowed,
            min_available: min,
            max_unavailable: max,
        }
    }

    #[test]
    fn allowed_as_the_disruption_controller_computes_it() {
        use IntOrPercent::{Int, Percent};
        let cases = [
            (budget(Some(2), None, None), 5, 2),
            (budget(None, Some(Int(3)), None), 5, 2),
            (budget(None, Some(Int(7)), None), 5, 0),
            // 50 % of 5 is 2.5, rounded up to 3 that must stay: 2 may go.
            (budget(None, Some(Percent("50%".into())), None), 5, 2),
            (budget(None, Some(Percent("100%".into())), None), 5, 0),
            (budget(None, None, Some(Int(1))), 5, 1),
            // 30 % of 5 is 1.5, rounded up: 2 may go.
            (budget(None, None, Some(Percent("30%".into()))), 5, 2),
            (budget(None, None, Some(Percent("0%".into()))), 5, 0),
        ];
        for (b, covered, expected) in cases {
            assert_eq!(disruptions_allowed(&b, covered), expected, "{b:?}");
        }
    }

    #[test]
    fn spending_a_budget_counts_violations_once_each() {
        let table = Arc::new(BudgetTable {
            names: vec!["a".into(), "b".into()],
            by_class: BTreeMap::new(),
            by_pod: BTreeMap::new(),
        });
        let mut ledger = BudgetLedger::new(table, true);
        ledger.set_left(vec![1, 0]);
        ledger.join(PodId(3), &[0]);
        ledger.join(PodId(4), &[0, 1]);
        assert!(ledger.may_spend(&[0]));
        assert!(!ledger.may_spend(&[0, 1]));
        assert_eq!(ledger.violated_by([&[0u32][..], &[0u32][..]]), 1);
        assert_eq!(ledger.violated_by([&[0u32][..]]), 0);
        assert_eq!(ledger.spend(PodId(3), &[0]), vec![0]);
        assert_eq!(ledger.members(0), &[PodId(4)]);
        assert_eq!(ledger.left(), &[0, 0]);
    }
}
