//! The fields coplan reads of each kind of object, as paths of keys: what the readers build
//! of an object (the rest is checked and skipped), and the count of every field it does not
//! model.

use std::collections::BTreeMap;

use super::fabric_objects as fo;
use super::tree::{Node, Value};

/// A path step matching every extended resource name (one with a `/`: `nvidia.com/gpu`,
/// `amd.com/gpu`, `nvidia.com/mig-3g.40gb`, a `--gpu-resource`): which of them are devices
/// is decided once the nodes are read.
const EXTENDED: &str = "<extended>";

/// Whether the path step `step` reads the key `key`.
fn step_matches(step: &str, key: &str) -> bool {
    step == key || (step == EXTENDED && key.contains('/'))
}

/// The fields coplan reads, per kind, as paths of keys (`[]` steps into a list's items).
fn modelled(kind: &str) -> &'static [&'static [&'static str]] {
    const COMMON: &[&str] = &["apiVersion"];
    match kind {
        "Node" => &[
            COMMON,
            &["kind"],
            &["metadata", "name"],
            &["metadata", "creationTimestamp"],
            &["metadata", "labels"],
            &["spec", "unschedulable"],
            &["spec", "taints"],
            &["status", "conditions", "[]", "type"],
            &["status", "conditions", "[]", "status"],
            &["status", "allocatable", "cpu"],
            &["status", "allocatable", "memory"],
            &["status", "allocatable", EXTENDED],
            &["status", "capacity", "cpu"],
            &["status", "capacity", "memory"],
            &["status", "capacity", EXTENDED],
        ],
        "Pod" => &[
            COMMON,
            &["kind"],
            &["metadata", "name"],
            &["metadata", "namespace"],
            &["metadata", "creationTimestamp"],
            &["spec", "nodeName"],
            &["spec", "priority"],
            &["spec", "priorityClassName"],
            &["spec", "nodeSelector"],
            &["spec", "affinity", "nodeAffinity"],
            &["spec", "affinity", "podAffinity"],
            &["spec", "affinity", "podAntiAffinity"],
            &["spec", "topologySpreadConstraints"],
            &["spec", "schedulingGates"],
            &["spec", "resourceClaims"],
            &["status", "resourceClaimStatuses"],
            &["spec", "volumes", "[]", "persistentVolumeClaim"],
            &["spec", "tolerations"],
            &["spec", "preemptionPolicy"],
            &["spec", "overhead"],
            &["spec", "initContainers", "[]", "restartPolicy"],
            &["spec", "containers", "[]", "resources", "requests", "cpu"],
            &[
                "spec",
                "containers",
                "[]",
                "resources",
                "requests",
                "memory",
            ],
            &[
                "spec",
                "containers",
                "[]",
                "resources",
                "requests",
                EXTENDED,
            ],
            &["spec", "containers", "[]", "resources", "limits", "cpu"],
            &["spec", "containers", "[]", "resources", "limits", "memory"],
            &["spec", "containers", "[]", "resources", "limits", EXTENDED],
            &[
                "spec",
                "initContainers",
                "[]",
                "resources",
                "requests",
                "cpu",
            ],
            &[
                "spec",
                "initContainers",
                "[]",
                "resources",
                "requests",
                EXTENDED,
            ],
            &["spec", "initContainers", "[]", "resources", "limits", "cpu"],
            &[
                "spec",
                "initContainers",
                "[]",
                "resources",
                "limits",
                EXTENDED,
            ],
            &["status", "phase"],
            &["status", "qosClass"],
            &["metadata", "labels"],
            &["metadata", "annotations", fo::KUEUE_REQUIRED],
            &["metadata", "annotations", fo::KUEUE_PREFERRED],
            &["metadata", "annotations", fo::KUEUE_SLICE_REQUIRED],
            &["metadata", "annotations", fo::KUEUE_SLICE_SIZE],
            &["metadata", "annotations", fo::KUEUE_WORKLOAD],
            &["metadata", "annotations", fo::VOLCANO_GROUP],
            &["metadata", "annotations", fo::VOLCANO_GROUP_OLD],
            &["metadata", "ownerReferences", "[]", "kind"],
            &["metadata", "ownerReferences", "[]", "name"],
            &["metadata", "ownerReferences", "[]", "controller"],
        ],
        "PodDisruptionBudget" => &[
            COMMON,
            &["kind"],
            &["metadata", "name"],
            &["metadata", "namespace"],
            &["spec", "selector"],
            &["spec", "minAvailable"],
            &["spec", "maxUnavailable"],
            &["status", "disruptionsAllowed"],
        ],
        "NodeResourceTopology" => &[
            COMMON,
            &["kind"],
            &["metadata", "name"],
            &["zones", "[]", "name"],
            &["zones", "[]", "type"],
            &["zones", "[]", "costs"],
            &["zones", "[]", "resources", "[]", "name"],
            &["zones", "[]", "resources", "[]", "capacity"],
            &["zones", "[]", "resources", "[]", "allocatable"],
            &["zones", "[]", "resources", "[]", "available"],
            &["attributes"],
            &["topologyPolicies"],
        ],
        _ => &[],
    }
}

/// Where a reader stands inside one object of a modelled kind, as [`ignored_fields`] walks
/// it: the modelled paths that run through the current place (a bit per path of
/// [`modelled`]) and how deep it is. A reader asks it, key by key, whether a value is read
/// at all: a value the walk counts as ignored is never looked into, so the reader need not
/// build it (it leaves [`Value::Skipped`] in its place, which the walk counts as the value it
/// stands for).
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    paths: &'static [&'static [&'static str]],
    depth: usize,
    mask: u64,
}

/// What a reader does with the value of one key: build it whole, build it asking the inner
/// scope, or skip it.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// Read whole: a modelled path ends here (or the walk does not look inside).
    Whole,
    /// Read, asking the scope inside it.
    Into(Scope),
    /// Not read: the walk counts it as an ignored field.
    Skip,
}

impl Scope {
    /// The scope at the top of an object of `kind`; `None` for a kind whose fields are not
    /// counted (every field is read).
    pub fn root(kind: &str) -> Option<Scope> {
        let paths = modelled(kind);
        if paths.is_empty() || paths.len() > 64 {
            return None;
        }
        Some(Scope {
            paths,
            depth: 0,
            mask: if paths.len() == 64 {
                u64::MAX
            } else {
                (1u64 << paths.len()) - 1
            },
        })
    }

    /// The value of map key `key` here.
    pub fn key(&self, key: &str) -> Step {
        let mut through = 0u64;
        let mut bits = self.mask;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let p = self.paths[i];
            if p.len() > self.depth && step_matches(p[self.depth], key) {
                if p.len() == self.depth + 1 {
                    return Step::Whole;
                }
                through |= 1 << i;
            }
        }
        if through == 0 {
            Step::Skip
        } else {
            Step::Into(Scope {
                paths: self.paths,
                depth: self.depth + 1,
                mask: through,
            })
        }
    }

    /// The items of a sequence here: the scope inside each, or `None` when the walk does not
    /// step into them (read whole).
    pub fn items(&self) -> Option<Scope> {
        let d = self.depth;
        if !self.paths.iter().any(|p| p.len() > d && p[d] == "[]") {
            return None;
        }
        let mut mask = 0u64;
        for (i, p) in self.paths.iter().enumerate() {
            if self.mask & (1 << i) != 0 && p.len() > d && p[d] == "[]" {
                mask |= 1 << i;
            }
        }
        Some(Scope {
            paths: self.paths,
            depth: d + 1,
            mask,
        })
    }
}

/// What a reader builds of one value.
#[derive(Debug, Clone, Copy)]
pub enum Want {
    /// All of it.
    Whole,
    /// An object's top: its `kind` (once read) says which of its fields are read.
    Object,
    /// What the scope reads.
    Scoped(Scope),
}

/// The fields of a map being read under `want`, key by key; `kind` decides an object's scope
/// once its value is read.
#[derive(Debug, Clone, Copy)]
pub struct MapWant {
    want: Want,
    /// For [`Want::Object`]: the scope once `kind` has been read (`Some(None)`: every field).
    kind: Option<Option<Scope>>,
}

impl MapWant {
    /// The fields of a map read under `want`.
    pub fn new(want: Want) -> MapWant {
        MapWant { want, kind: None }
    }

    /// What is built of the value of `key`: `None` to skip it.
    pub fn key(&self, key: &str) -> Option<Want> {
        let scope = match (self.want, self.kind) {
            (Want::Whole, _) | (Want::Object, None | Some(None)) => return Some(Want::Whole),
            (Want::Object, Some(Some(scope))) | (Want::Scoped(scope), _) => scope,
        };
        match scope.key(key) {
            Step::Whole => Some(Want::Whole),
            Step::Into(inner) => Some(Want::Scoped(inner)),
            Step::Skip => None,
        }
    }

    /// After the value of `key` was read: the first `kind` of an object decides its scope.
    pub fn read(&mut self, key: &str, value: &Node) {
        if matches!(self.want, Want::Object) && self.kind.is_none() && key == "kind" {
            self.kind = Some(Scope::root(value.as_str().unwrap_or_default()));
        }
    }
}

impl Want {
    /// What is built of each item of a sequence read under this.
    pub fn items(self) -> Want {
        match self {
            Want::Whole | Want::Object => Want::Whole,
            Want::Scoped(scope) => scope.items().map_or(Want::Whole, Want::Scoped),
        }
    }
}

/// Maps whose keys are free-form: their ignored entries are counted as one path `…*`.
const FREE_FORM: &[&str] = &["labels", "annotations"];

/// Counts every field of `value` (one object of `kind`) that coplan does not read, by
/// `Kind: dotted.path`, into `out`.
pub fn ignored_fields(kind: &str, value: &Node, out: &mut BTreeMap<String, u64>) {
    let paths = modelled(kind);
    let mut prefix: Vec<&str> = Vec::new();
    walk(kind, paths, value, &mut prefix, out);
}

fn walk<'v>(
    kind: &str,
    paths: &[&[&str]],
    value: &'v Node,
    prefix: &mut Vec<&'v str>,
    out: &mut BTreeMap<String, u64>,
) {
    let depth = prefix.len();
    match &value.value {
        Value::Map(map) => {
            for (key, child) in map {
                // The lengths of the modelled paths through this key.
                let mut through = false;
                let mut ends_here = false;
                for p in paths {
                    if p.len() > depth
                        && step_matches(p[depth], key)
                        && p[..depth]
                            .iter()
                            .zip(prefix.iter())
                            .all(|(a, b)| step_matches(a, b))
                    {
                        through = true;
                        ends_here |= p.len() == depth + 1;
                    }
                }
                if ends_here {
                    continue;
                }
                if !through {
                    let parent_free = prefix.last().is_some_and(|p| FREE_FORM.contains(p));
                    let path = if parent_free {
                        format!("{}.*", prefix.join("."))
                    } else {
                        let mut v: Vec<&str> = prefix.clone();
                        v.push(key);
                        v.join(".")
                    };
                    *out.entry(format!("{kind}: {path}")).or_default() += 1;
                    continue;
                }
                prefix.push(key);
                walk(kind, paths, child, prefix, out);
                prefix.pop();
            }
        }
        Value::Seq(items) => {
            let steps_in = paths.iter().any(|p| p.len() > depth && p[depth] == "[]");
            if steps_in {
                prefix.push("[]");
                for item in items {
                    walk(kind, paths, item, prefix, out);
                }
                prefix.pop();
            }
        }
        Value::Scalar { .. } | Value::Skipped => {}
    }
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;
