//! The one filter every planner, the verifier and `explain` ask whether a server may take a
//! pod of a workload class (DESIGN §12.1). It applies the Kubernetes scheduler's filter
//! plugins in their order: readiness, `NodeUnschedulable`, `NodeAffinity` (node selector,
//! then required affinity terms), `TaintToleration`. The first rule that refuses is the
//! reason given.

use std::fmt;
use std::sync::Arc;

use crate::spec::eligibility::{
    AffinityTerm, NODE_NAME_FIELD, NodeRules, PodRules, PreemptionPolicy, Taint, TaintEffect,
    UNSCHEDULABLE_TAINT,
};
use crate::spec::preemption::{PreemptionSpec, WorkloadClass};

use super::{Cluster, ServerId};

/// Why a server refuses a pod: the first filter rule that does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The node is NotReady.
    NotReady,
    /// The node is cordoned and the pod does not tolerate `node.kubernetes.io/unschedulable`.
    Unschedulable,
    /// The node selector wants `key` = `wanted`; the node has `found`.
    NodeSelector {
        /// Label key.
        key: String,
        /// Value the selector asks for.
        wanted: String,
        /// The node's value, if it has the label.
        found: Option<String>,
    },
    /// No required node affinity term holds.
    NodeAffinity,
    /// A `NoSchedule` / `NoExecute` taint the pod does not tolerate.
    Taint(Taint),
}

impl Refusal {
    /// The rule's short name, as `explain` and JSON output give it.
    pub fn rule(&self) -> &'static str {
        match self {
            Refusal::NotReady => "not-ready",
            Refusal::Unschedulable => "unschedulable",
            Refusal::NodeSelector { .. } => "node-selector",
            Refusal::NodeAffinity => "node-affinity",
            Refusal::Taint(_) => "taint",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotReady => f.write_str("node is NotReady"),
            Refusal::Unschedulable => f.write_str("node is cordoned (unschedulable)"),
            Refusal::NodeSelector { key, wanted, found } => match found {
                Some(v) => write!(f, "node selector wants {key}={wanted}, node has {v}"),
                None => write!(f, "node selector wants {key}={wanted}, node has no such label"),
            },
            Refusal::NodeAffinity => f.write_str("no required node affinity term matches"),
            Refusal::Taint(t) if t.value.is_empty() => {
                write!(f, "untolerated taint {}:{}", t.key, t.effect)
            }
            Refusal::Taint(t) => write!(f, "untolerated taint {}={}:{}", t.key, t.value, t.effect),
        }
    }
}

/// The scheduling rules of a workload class.
pub fn pod_rules(class: &WorkloadClass) -> PodRules<'_> {
    PodRules {
        node_selector: &class.node_selector,
        node_affinity: &class.node_affinity,
        tolerations: &class.tolerations,
    }
}

fn term_holds(term: &AffinityTerm, node_name: &str, node: &NodeRules) -> bool {
    // An empty term matches no node, as the scheduler reads it.
    if term.match_expressions.is_empty() && term.match_fields.is_empty() {
        return false;
    }
    term.match_expressions
        .iter()
        .all(|r| r.matches(node.labels.get(&r.key).map(String::as_str)))
        && term
            .match_fields
            .iter()
            .all(|r| r.key == NODE_NAME_FIELD && r.matches(Some(node_name)))
}

/// Whether `pod` tolerates `taint`.
pub fn tolerated(pod: &PodRules<'_>, taint: &Taint) -> bool {
    pod.tolerations.iter().any(|t| t.tolerates(taint))
}

/// The first rule by which the node `node_name` with `node`'s rules refuses a pod with `pod`'s
/// rules; `None` when it may take it.
pub fn refusal(node_name: &str, node: &NodeRules, pod: &PodRules<'_>) -> Option<Refusal> {
    if !node.ready {
        return Some(Refusal::NotReady);
    }
    if node.unschedulable {
        let cordon = Taint {
            key: UNSCHEDULABLE_TAINT.into(),
            value: String::new(),
            effect: TaintEffect::NoSchedule,
        };
        if !tolerated(pod, &cordon) {
            return Some(Refusal::Unschedulable);
        }
    }
    for (key, wanted) in pod.node_selector {
        let found = node.labels.get(key);
        if found != Some(wanted) {
            return Some(Refusal::NodeSelector {
                key: key.clone(),
                wanted: wanted.clone(),
                found: found.cloned(),
            });
        }
    }
    if !pod.node_affinity.is_empty()
        && !pod
            .node_affinity
            .iter()
            .any(|t| term_holds(t, node_name, node))
    {
        return Some(Refusal::NodeAffinity);
    }
    node.taints
        .iter()
        .find(|t| t.effect.filters() && !tolerated(pod, t))
        .map(|t| Refusal::Taint(t.clone()))
}

/// How many `PreferNoSchedule` taints of the node the pod does not tolerate: the scheduler's
/// `TaintToleration` score prefers nodes with fewer.
pub fn intolerable_preferences(node: &NodeRules, pod: &PodRules<'_>) -> usize {
    node.taints
        .iter()
        .filter(|t| t.effect == TaintEffect::PreferNoSchedule && !tolerated(pod, t))
        .count()
}

/// The filter's answers for one workload: per class, which servers may take its pods, and
/// whether its pods may evict. Computed once per plan; every planner reads it.
#[derive(Debug, Clone, Default)]
pub struct Eligibility {
    /// Per class: `None` when every server may take it, else one flag per server.
    allowed: Vec<Option<Arc<[bool]>>>,
    /// Per class: whether its preemptors may evict (`preemption_policy`).
    evicts: Vec<bool>,
    /// Per class: how many servers may take it.
    eligible_count: Vec<usize>,
}

impl Eligibility {
    /// The filter applied to every class and server of `spec` on `cluster`.
    pub fn new(cluster: &Cluster, spec: &PreemptionSpec) -> Self {
        let any_node_rule = cluster.servers.iter().any(|s| s.rules.restricts());
        let mut allowed = Vec::with_capacity(spec.workload.len());
        let mut eligible_count = Vec::with_capacity(spec.workload.len());
        for class in &spec.workload {
            let rules = pod_rules(class);
            if !any_node_rule && !rules.selects() {
                allowed.push(None);
                eligible_count.push(cluster.servers.len());
                continue;
            }
            let flags: Arc<[bool]> = cluster
                .servers
                .iter()
                .map(|s| refusal(&s.name, &s.rules, &rules).is_none())
                .collect();
            eligible_count.push(flags.iter().filter(|&&f| f).count());
            allowed.push(if flags.iter().all(|&f| f) {
                None
            } else {
                Some(flags)
            });
        }
        let evicts = spec
            .workload
            .iter()
            .map(|c| c.preemption_policy != PreemptionPolicy::Never)
            .collect();
        Eligibility {
            allowed,
            evicts,
            eligible_count,
        }
    }

    /// Whether `server` may take a pod of class `class` (a class index out of range — a pod
    /// the spec does not describe — is allowed everywhere).
    pub fn allows(&self, class: usize, server: ServerId) -> bool {
        match self.allowed.get(class) {
            Some(Some(flags)) => flags.get(server.index()).copied().unwrap_or(true),
            _ => true,
        }
    }

    /// Per server, whether it may take class `class`; `None` when every server may.
    pub fn flags(&self, class: usize) -> Option<Arc<[bool]>> {
        self.allowed.get(class).cloned().flatten()
    }

    /// Whether every server may take class `class`.
    pub fn unrestricted(&self, class: usize) -> bool {
        !matches!(self.allowed.get(class), Some(Some(_)))
    }

    /// Whether pods of class `class` may evict others.
    pub fn evicts(&self, class: usize) -> bool {
        self.evicts.get(class).copied().unwrap_or(true)
    }

    /// How many servers may take class `class`.
    pub fn eligible_servers(&self, class: usize) -> usize {
        self.eligible_count.get(class).copied().unwrap_or(0)
    }

    /// Why `server` refuses class `class` (for `explain`); `None` when it may take it.
    pub fn why(
        cluster: &Cluster,
        spec: &PreemptionSpec,
        class: usize,
        server: ServerId,
    ) -> Option<Refusal> {
        let class = spec.workload.get(class)?;
        let s = cluster.server(server);
        refusal(&s.name, &s.rules, &pod_rules(class))
    }
}
