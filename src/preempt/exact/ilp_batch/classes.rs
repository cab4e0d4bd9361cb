//! The batch's unit of aggregation: classes of identical preemptors (one workload), and the
//! counts of each class a model places.

use std::collections::BTreeMap;

use crate::plan::preemption::Preemptor;

/// Instances of one workload class, in list order.
pub struct Class {
    /// Indices into the preemptor list.
    pub members: Vec<usize>,
    /// The first member, whose request and priority stand for the class.
    pub rep: usize,
}

/// Groups the preemptors by workload class, in order of first appearance.
pub fn classes(preemptors: &[Preemptor]) -> Vec<Class> {
    let mut out: Vec<Class> = Vec::new();
    let mut of_workload: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, p) in preemptors.iter().enumerate() {
        let c = *of_workload.entry(p.workload).or_insert_with(|| {
            out.push(Class {
                members: Vec::new(),
                rep: i,
            });
            out.len() - 1
        });
        out[c].members.push(i);
    }
    out
}

/// The model restricted to some servers: either "at most the class sizes" over all servers
/// (monolithic), or "exactly these counts" on one server (a subproblem).
#[derive(Clone, Copy)]
pub enum Counts<'a> {
    /// Each class places at most its size over the servers given (the monolithic model).
    AtMost,
    /// Each class places (or refuses) exactly `k[class]` instances on the one server given.
    Exactly(&'a [u32]),
    /// At most the class sizes on the servers given, each instance placed or refused priced
    /// `-λ[class]` on top of its cost: a Lagrangian subproblem (`lagrangian`).
    Priced(&'a [f64]),
}

impl Counts<'_> {
    /// Whether the model has variables for class `ci` (a subproblem has none for a class it
    /// places no instance of).
    pub fn includes(&self, ci: usize) -> bool {
        match self {
            Counts::AtMost | Counts::Priced(_) => true,
            Counts::Exactly(k) => k[ci] > 0,
        }
    }
}
