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

use super::cluster::Cluster;
use super::ids::ServerId;

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
                None => write!(
                    f,
                    "node selector wants {key}={wanted}, node has no such label"
                ),
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

#[cfg(test)]
mod tests {
    //! Scheduler-style tables: node × pod → admitted, or refused by the rule named.

    use std::collections::BTreeMap;

    use super::*;
    use crate::spec::eligibility::{
        Requirement, SelectorOperator as Op, TaintEffect as E, Toleration, TolerationOperator as T,
    };

    fn node(labels: &[(&str, &str)], taints: &[(&str, &str, E)]) -> NodeRules {
        NodeRules {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            taints: taints
                .iter()
                .map(|(k, v, e)| Taint {
                    key: k.to_string(),
                    value: v.to_string(),
                    effect: *e,
                })
                .collect(),
            unschedulable: false,
            ready: true,
        }
    }

    fn req(key: &str, operator: Op, values: &[&str]) -> Requirement {
        Requirement {
            key: key.into(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    fn tol(key: &str, operator: T, value: &str, effect: Option<E>) -> Toleration {
        Toleration {
            key: key.into(),
            operator,
            value: value.into(),
            effect,
        }
    }

    struct Pod {
        selector: BTreeMap<String, String>,
        affinity: Vec<AffinityTerm>,
        tolerations: Vec<Toleration>,
    }

    impl Pod {
        fn new() -> Self {
            Pod {
                selector: BTreeMap::new(),
                affinity: vec![],
                tolerations: vec![],
            }
        }
        fn rules(&self) -> PodRules<'_> {
            PodRules {
                node_selector: &self.selector,
                node_affinity: &self.affinity,
                tolerations: &self.tolerations,
            }
        }
        fn expressions(mut self, r: Vec<Requirement>) -> Self {
            self.affinity.push(AffinityTerm {
                match_expressions: r,
                match_fields: vec![],
            });
            self
        }
    }

    fn rule(n: &NodeRules, name: &str, p: &Pod) -> Option<&'static str> {
        refusal(name, n, &p.rules()).map(|r| r.rule())
    }

    #[test]
    fn every_selector_operator_as_the_scheduler_reads_it() {
        let n = node(&[("gpu", "H100"), ("count", "8")], &[]);
        let cases: Vec<(Requirement, bool)> = vec![
            (req("gpu", Op::In, &["A100", "H100"]), true),
            (req("gpu", Op::In, &["A100"]), false),
            (req("absent", Op::In, &["x"]), false),
            (req("gpu", Op::NotIn, &["A100"]), true),
            (req("gpu", Op::NotIn, &["H100"]), false),
            (req("absent", Op::NotIn, &["x"]), true),
            (req("gpu", Op::Exists, &[]), true),
            (req("absent", Op::Exists, &[]), false),
            (req("gpu", Op::DoesNotExist, &[]), false),
            (req("absent", Op::DoesNotExist, &[]), true),
            (req("count", Op::Gt, &["4"]), true),
            (req("count", Op::Gt, &["8"]), false),
            (req("count", Op::Lt, &["9"]), true),
            (req("count", Op::Lt, &["8"]), false),
            // Not an integer on the node: Gt and Lt fail.
            (req("gpu", Op::Gt, &["1"]), false),
            (req("absent", Op::Lt, &["1"]), false),
        ];
        for (r, admitted) in cases {
            let p = Pod::new().expressions(vec![r.clone()]);
            let got = rule(&n, "n0", &p);
            let want = (!admitted).then_some("node-affinity");
            assert_eq!(got, want, "{r:?}");
        }
    }

    #[test]
    fn terms_are_alternatives_and_requirements_conjunctions() {
        let n = node(&[("gpu", "H100"), ("zone", "a")], &[]);
        let both = Pod::new().expressions(vec![
            req("gpu", Op::In, &["H100"]),
            req("zone", Op::In, &["b"]),
        ]);
        assert_eq!(rule(&n, "n0", &both), Some("node-affinity"));
        let either = Pod::new()
            .expressions(vec![req("zone", Op::In, &["b"])])
            .expressions(vec![req("gpu", Op::In, &["H100"])]);
        assert_eq!(rule(&n, "n0", &either), None);
        // An empty term matches nothing.
        let mut empty = Pod::new();
        empty.affinity.push(AffinityTerm::default());
        assert_eq!(rule(&n, "n0", &empty), Some("node-affinity"));
    }

    #[test]
    fn match_fields_read_the_node_name() {
        let n = node(&[], &[]);
        let mut p = Pod::new();
        p.affinity.push(AffinityTerm {
            match_expressions: vec![],
            match_fields: vec![req(NODE_NAME_FIELD, Op::In, &["n1", "n2"])],
        });
        assert_eq!(rule(&n, "n1", &p), None);
        assert_eq!(rule(&n, "n0", &p), Some("node-affinity"));
        p.affinity[0].match_fields[0].operator = Op::NotIn;
        assert_eq!(rule(&n, "n0", &p), None);
        assert_eq!(rule(&n, "n1", &p), Some("node-affinity"));
    }

    #[test]
    fn node_selector_wants_every_label_with_its_value() {
        let n = node(&[("gpu", "H100"), ("zone", "a")], &[]);
        let mut p = Pod::new();
        p.selector.insert("gpu".into(), "H100".into());
        assert_eq!(rule(&n, "n0", &p), None);
        p.selector.insert("zone".into(), "b".into());
        let r = refusal("n0", &n, &p.rules()).expect("refused");
        assert_eq!(r.to_string(), "node selector wants zone=b, node has a");
    }

    #[test]
    fn taints_and_tolerations() {
        let cases: Vec<(E, Vec<Toleration>, Option<&str>)> = vec![
            (E::NoSchedule, vec![], Some("taint")),
            (E::NoExecute, vec![], Some("taint")),
            // A preference is a score, never a filter.
            (E::PreferNoSchedule, vec![], None),
            (
                E::NoSchedule,
                vec![tol("team", T::Equal, "llm", None)],
                None,
            ),
            (
                E::NoSchedule,
                vec![tol("team", T::Equal, "web", None)],
                Some("taint"),
            ),
            (E::NoSchedule, vec![tol("team", T::Exists, "", None)], None),
            (
                E::NoSchedule,
                vec![tol("team", T::Exists, "", Some(E::NoExecute))],
                Some("taint"),
            ),
            (
                E::NoExecute,
                vec![tol("team", T::Equal, "llm", Some(E::NoExecute))],
                None,
            ),
            // An empty key with Exists tolerates every taint.
            (E::NoExecute, vec![tol("", T::Exists, "", None)], None),
            (
                E::NoSchedule,
                vec![tol("other", T::Exists, "", None)],
                Some("taint"),
            ),
        ];
        for (effect, tolerations, want) in cases {
            let n = node(&[], &[("team", "llm", effect)]);
            let mut p = Pod::new();
            p.tolerations = tolerations.clone();
            assert_eq!(rule(&n, "n0", &p), want, "{effect:?} {tolerations:?}");
        }
        let n = node(&[], &[("team", "llm", E::PreferNoSchedule)]);
        assert_eq!(intolerable_preferences(&n, &Pod::new().rules()), 1);
    }

    #[test]
    fn cordon_and_readiness() {
        let mut n = node(&[], &[]);
        n.unschedulable = true;
        let mut p = Pod::new();
        assert_eq!(rule(&n, "n0", &p), Some("unschedulable"));
        p.tolerations
            .push(tol(UNSCHEDULABLE_TAINT, T::Exists, "", Some(E::NoSchedule)));
        assert_eq!(rule(&n, "n0", &p), None);
        n.ready = false;
        // NotReady takes nothing, whatever the pod tolerates.
        p.tolerations.push(tol("", T::Exists, "", None));
        assert_eq!(rule(&n, "n0", &p), Some("not-ready"));
    }

    #[test]
    fn the_first_refusing_rule_is_the_reason() {
        let mut n = node(&[("gpu", "A100")], &[("team", "llm", E::NoSchedule)]);
        n.unschedulable = true;
        let mut p = Pod::new();
        p.selector.insert("gpu".into(), "H100".into());
        assert_eq!(rule(&n, "n0", &p), Some("unschedulable"));
        n.unschedulable = false;
        assert_eq!(rule(&n, "n0", &p), Some("node-selector"));
        p.selector.clear();
        assert_eq!(rule(&n, "n0", &p), Some("taint"));
    }
}
