//! What decides whether a node may take a pod, as the Kubernetes scheduler's filters read it
//! (DESIGN §12.1): node labels, taints, cordons and readiness on the cluster side; node
//! selectors, required node affinity, tolerations and the preemption policy on the workload
//! side. The filter that applies them is [`crate::eligibility`].

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A node taint: pods that do not tolerate it are kept off the node (`NoSchedule`,
/// `NoExecute`) or merely steered away (`PreferNoSchedule`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Taint {
    /// Taint key, e.g. `nvidia.com/gpu`.
    pub key: String,
    /// Taint value; empty when the taint has none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// What the taint does to pods that do not tolerate it.
    pub effect: TaintEffect,
}

/// Effect of a taint, spelt as Kubernetes spells it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum TaintEffect {
    /// New pods that do not tolerate it are not scheduled here.
    NoSchedule,
    /// The scheduler avoids the node for pods that do not tolerate it (a score, not a filter).
    PreferNoSchedule,
    /// As `NoSchedule`, and running pods that do not tolerate it are evicted.
    NoExecute,
}

impl TaintEffect {
    /// The Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }

    /// Whether the scheduler's filter refuses an untolerated taint of this effect.
    pub fn filters(self) -> bool {
        self != TaintEffect::PreferNoSchedule
    }
}

impl fmt::Display for TaintEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a toleration matches a taint's value.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize, JsonSchema,
)]
pub enum TolerationOperator {
    /// Key and value must both match.
    #[default]
    Equal,
    /// Any value of the key (every key when the key is empty).
    Exists,
}

/// A toleration of a workload class.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Toleration {
    /// Taint key; empty with `Exists` tolerates every taint.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
    /// `Equal` (default) or `Exists`.
    #[serde(default)]
    pub operator: TolerationOperator,
    /// The value `Equal` compares with; empty for `Exists`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// The effect tolerated; absent tolerates every effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,
}

impl Toleration {
    /// Whether this toleration tolerates `taint` (the scheduler's rule).
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|e| e != taint.effect) {
            return false;
        }
        if self.key.is_empty() {
            return self.operator == TolerationOperator::Exists;
        }
        if self.key != taint.key {
            return false;
        }
        match self.operator {
            TolerationOperator::Exists => true,
            TolerationOperator::Equal => self.value == taint.value,
        }
    }
}

/// Operator of a node selector requirement.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum SelectorOperator {
    /// The label's value is one of `values`.
    In,
    /// The label is absent or its value is none of `values`.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label's value, an integer, is greater than the one value.
    Gt,
    /// The label's value, an integer, is less than the one value.
    Lt,
}

impl SelectorOperator {
    /// The Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SelectorOperator::In => "In",
            SelectorOperator::NotIn => "NotIn",
            SelectorOperator::Exists => "Exists",
            SelectorOperator::DoesNotExist => "DoesNotExist",
            SelectorOperator::Gt => "Gt",
            SelectorOperator::Lt => "Lt",
        }
    }
}

/// One requirement of a node selector term.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Label key (or, in `match_fields`, the field: only `metadata.name`).
    pub key: String,
    /// How the label is compared.
    pub operator: SelectorOperator,
    /// Values compared with: at least one for `In`/`NotIn`, none for
    /// `Exists`/`DoesNotExist`, exactly one integer for `Gt`/`Lt`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl Requirement {
    /// Whether a node whose `key` has `value` (absent: `None`) meets the requirement.
    pub fn matches(&self, value: Option<&str>) -> bool {
        let number = |s: &str| s.trim().parse::<i64>().ok();
        match self.operator {
            SelectorOperator::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            SelectorOperator::NotIn => value.is_none_or(|v| self.values.iter().all(|x| x != v)),
            SelectorOperator::Exists => value.is_some(),
            SelectorOperator::DoesNotExist => value.is_none(),
            SelectorOperator::Gt | SelectorOperator::Lt => {
                let (Some(v), Some(bound)) = (
                    value.and_then(number),
                    self.values.first().and_then(|b| number(b)),
                ) else {
                    return false;
                };
                if self.operator == SelectorOperator::Gt {
                    v > bound
                } else {
                    v < bound
                }
            }
        }
    }
}

/// The field `match_fields` may name: the node's name.
pub const NODE_NAME_FIELD: &str = "metadata.name";

/// One term of required node affinity: every requirement must hold. Terms are alternatives.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize, JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct AffinityTerm {
    /// Requirements on node labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<Requirement>,
    /// Requirements on node fields (`metadata.name`, with `In` or `NotIn`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_fields: Vec<Requirement>,
}

/// Whether a class's preemptors may evict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum PreemptionPolicy {
    /// Kubernetes' `PreemptLowerPriority`: may evict pods of lower priority.
    #[default]
    LowerPriority,
    /// Kubernetes' `Never`: placed where it fits, never evicts.
    Never,
}

impl PreemptionPolicy {
    /// Whether this is the default (for `skip_serializing_if`).
    pub fn is_default(&self) -> bool {
        *self == PreemptionPolicy::LowerPriority
    }
}

/// The scheduling rules a server carries: set on a pool, refined per named server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeRules {
    /// Node labels.
    pub labels: BTreeMap<String, String>,
    /// Node taints.
    pub taints: Vec<Taint>,
    /// Cordoned (`spec.unschedulable`): only pods that tolerate
    /// `node.kubernetes.io/unschedulable` may land.
    pub unschedulable: bool,
    /// A NotReady node takes nothing.
    pub ready: bool,
}

impl NodeRules {
    /// No labels, taints or cordon; ready.
    pub fn open() -> Self {
        NodeRules {
            ready: true,
            ..Default::default()
        }
    }

    /// Whether any rule can refuse a pod here.
    pub fn restricts(&self) -> bool {
        !self.ready || self.unschedulable || self.taints.iter().any(|t| t.effect.filters())
    }
}

/// The taint a cordoned node carries, which tolerating lets a pod land anyway.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// The scheduling rules a workload class carries.
#[derive(Debug, Clone, Copy)]
pub struct PodRules<'a> {
    /// `nodeSelector`: every label must be present with this value.
    pub node_selector: &'a BTreeMap<String, String>,
    /// Required node affinity: at least one term must hold (none: no constraint).
    pub node_affinity: &'a [AffinityTerm],
    /// Tolerations.
    pub tolerations: &'a [Toleration],
}

impl PodRules<'_> {
    /// Whether the class constrains nodes at all (a class without rules can go anywhere a
    /// node allows).
    pub fn selects(&self) -> bool {
        !self.node_selector.is_empty() || !self.node_affinity.is_empty()
    }
}
