//! What a pending pod asks of the gang it belongs to: Kueue's topology annotations (the
//! levels named by node label) with the workload, owner or pod they group it by, or the
//! Volcano PodGroup its group-name annotation names (`minMember`, `networkTopology` read by
//! HyperNode tier). A label that names no level, a slice without its size, a preference or a
//! slice wider than the required level and a PodGroup setting that names no level are
//! refused where they are written.

use serde_saphyr::Spanned;

use super::fabric_domains::Fabric;
use super::fabric_read::Placed;
use super::read::{PodObject, at_object, at_span};
use crate::import::error::ImportError;
use crate::import::fabric_objects::{
    KUEUE_PODSET, KUEUE_PREFERRED, KUEUE_REQUIRED, KUEUE_SLICE_REQUIRED, KUEUE_SLICE_SIZE,
    KUEUE_WORKLOAD, VOLCANO_GROUP, VOLCANO_GROUP_OLD,
};
use crate::import::k8s_objects::Text;

/// What a pod asks of its gang; pods of one gang ask the same.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ask {
    /// The pods sharing it are one gang.
    pub(super) key: String,
    /// The gang's name.
    pub(super) name: String,
    pub(super) required: Option<String>,
    pub(super) preferred: Option<String>,
    /// Pods per slice and the level each slice fits in.
    pub(super) slice: Option<(i64, String)>,
    /// Volcano: the pods the PodGroup needs together (`None`: every pending pod of it).
    pub(super) min_member: Option<i64>,
}

/// A pending pod as a gang member: the pod, its `namespace/name` and document line.
pub(super) type Pending<'a> = (&'a PodObject, &'a str, usize);

/// The gang a pending pod asks for, if any: Kueue's annotations, else Volcano's group name.
pub(super) fn ask_of(
    (pod, name, doc_line): Pending<'_>,
    fabric: &Fabric,
    pod_groups: &std::collections::BTreeMap<String, Placed>,
) -> Result<Option<Ask>, ImportError> {
    let a = &pod.object.metadata.annotations;
    let group = a.get(VOLCANO_GROUP).or_else(|| a.get(VOLCANO_GROUP_OLD));
    let kueue = [
        KUEUE_REQUIRED,
        KUEUE_PREFERRED,
        KUEUE_SLICE_REQUIRED,
        KUEUE_SLICE_SIZE,
    ]
    .iter()
    .find_map(|k| a.get(k).map(|v| (*k, v)));
    match (group, kueue) {
        (Some(g), Some((key, _))) => Err(at_span(
            &pod.origin,
            doc_line,
            g,
            format!("pod `{name}` names Volcano PodGroup `{}` and carries Kueue's `{key}`", g.value.0),
        )
        .with(
            "two gang schedulers",
            "coplan reads a pod's gang from Kueue's annotations or from its Volcano PodGroup, not both",
        )),
        (None, Some(_)) => kueue_ask((pod, name, doc_line), fabric).map(Some),
        (Some(g), None) => volcano_ask(pod, g, fabric, pod_groups).map(Some),
        (None, None) => Ok(None),
    }
}

/// The level a Kueue annotation's node label names.
fn level_of(
    (pod, name, doc_line): Pending<'_>,
    fabric: &Fabric,
    (key, value): (&str, &Spanned<Text>),
) -> Result<String, ImportError> {
    let label = value.value.0.trim();
    fabric
        .level_of_label(label)
        .map(str::to_string)
        .ok_or_else(|| {
            at_span(
                &pod.origin,
                doc_line,
                value,
                format!("pod `{name}`: {key} names node label `{label}`, which is no level"),
            )
            .with("no such level", fabric.described())
        })
}

/// Kueue's annotations of a pod and the gang they group it into: its workload (label or
/// annotation) and podset, else its controller, else the pod alone.
fn kueue_ask(pending: Pending<'_>, fabric: &Fabric) -> Result<Ask, ImportError> {
    let (pod, name, doc_line) = pending;
    let a = &pod.object.metadata.annotations;
    let level = |key: &'static str| {
        a.get(key)
            .map(|v| level_of(pending, fabric, (key, v)).map(|l| (l, v)))
            .transpose()
    };
    let required = level(KUEUE_REQUIRED)?;
    let preferred = level(KUEUE_PREFERRED)?;
    let slice_level = level(KUEUE_SLICE_REQUIRED)?;
    let slice_size = a.get(KUEUE_SLICE_SIZE);
    let rank = |l: &str| fabric.all_levels().iter().position(|x| *x == l);
    let wider = |(l, v): &(String, &Spanned<Text>), what: &str| match &required {
        Some((r, _)) if rank(l) < rank(r) => Err(at_span(
            &pod.origin,
            doc_line,
            *v,
            format!("pod `{name}`: the {what} level `{l}` is wider than the required `{r}`"),
        )
        .with(
            "wider than required",
            "a gang's preferred and slice levels lie inside its required level",
        )),
        _ => Ok(()),
    };
    if let Some(p) = &preferred {
        wider(p, "preferred")?;
    }
    let slice = match (&slice_level, slice_size) {
        (None, None) => None,
        (Some(l), Some(size)) => {
            wider(l, "slice")?;
            Some((slice_count(pending, size)?, l.0.clone()))
        }
        (Some((_, v)), None) => {
            return Err(missing(pending, v, KUEUE_SLICE_REQUIRED, KUEUE_SLICE_SIZE));
        }
        (None, Some(v)) => {
            return Err(missing(pending, v, KUEUE_SLICE_SIZE, KUEUE_SLICE_REQUIRED));
        }
    };
    let (key, gang) = group_of(pod, name);
    Ok(Ask {
        key,
        name: gang,
        required: required.map(|(l, _)| l),
        preferred: preferred.map(|(l, _)| l),
        slice,
        min_member: None,
    })
}

/// The error of one slice annotation without the other.
fn missing(
    (pod, name, doc_line): Pending<'_>,
    v: &Spanned<Text>,
    has: &str,
    lacks: &str,
) -> ImportError {
    at_span(
        &pod.origin,
        doc_line,
        v,
        format!("pod `{name}` has {has} but no {lacks}"),
    )
    .with(
        "slice half given",
        format!("a podset's slices need both {KUEUE_SLICE_REQUIRED} and {KUEUE_SLICE_SIZE}"),
    )
}

/// The pods per slice: a whole number from 1.
fn slice_count((pod, name, doc_line): Pending<'_>, v: &Spanned<Text>) -> Result<i64, ImportError> {
    let text = v.value.0.trim();
    text.parse::<i64>()
        .ok()
        .filter(|n| (1..=i64::from(i32::MAX)).contains(n))
        .ok_or_else(|| {
            at_span(
                &pod.origin,
                doc_line,
                v,
                format!("pod `{name}`: {KUEUE_SLICE_SIZE} `{text}` is not a count of pods"),
            )
            .with("not a count", "a whole number of pods from 1, e.g. \"4\"")
        })
}

/// The group a Kueue pod is in (key, gang name): its workload and podset, else its
/// controller (and podset), else itself.
fn group_of(pod: &PodObject, name: &str) -> (String, String) {
    let meta = &pod.object.metadata;
    let ns = meta.namespace.as_deref().unwrap_or("default");
    let podset = meta
        .labels
        .get(KUEUE_PODSET)
        .map_or(String::new(), |p| format!("/{p}"));
    let workload = meta
        .labels
        .get(KUEUE_WORKLOAD)
        .map(str::to_string)
        .or_else(|| {
            meta.annotations
                .get(KUEUE_WORKLOAD)
                .map(|v| v.value.0.clone())
        })
        .filter(|w| !w.trim().is_empty());
    if let Some(w) = workload {
        let gang = format!("{ns}/{w}{podset}");
        return (format!("kueue workload {gang}"), gang);
    }
    let owner = meta
        .owner_references
        .iter()
        .find(|o| o.controller == Some(true) && !o.name.is_empty());
    match owner {
        Some(o) => (
            format!("owner {ns}/{}/{}{podset}", o.kind, o.name),
            format!("{ns}/{}{podset}", o.name),
        ),
        None => (format!("pod {name}"), name.to_string()),
    }
}

/// The gang of a pod of Volcano PodGroup `group`: its `minMember` and `networkTopology`
/// (`hard`: the required level, `soft`: the preferred one, by `highestTierAllowed`). A
/// PodGroup not in the snapshot makes a gang of its pending pods with no level (the
/// importer warns).
fn volcano_ask(
    pod: &PodObject,
    group: &Spanned<Text>,
    fabric: &Fabric,
    pod_groups: &std::collections::BTreeMap<String, Placed>,
) -> Result<Ask, ImportError> {
    let ns = pod
        .object
        .metadata
        .namespace
        .as_deref()
        .unwrap_or("default");
    let id = format!("{ns}/{}", group.value.0.trim());
    let mut ask = Ask {
        key: format!("volcano {id}"),
        name: id.clone(),
        required: None,
        preferred: None,
        slice: None,
        min_member: None,
    };
    let Some(pg) = pod_groups.get(&id) else {
        return Ok(ask);
    };
    let spec = &pg.object.spec;
    if let Some(m) = &spec.min_member {
        if m.value < 1 || m.value > i64::from(i32::MAX) {
            return Err(at_span(
                &pg.origin,
                1,
                m,
                format!(
                    "PodGroup `{id}`: minMember {} is not a count of pods",
                    m.value
                ),
            )
            .with("not a count", "the pods that must run together, from 1"));
        }
        ask.min_member = Some(m.value);
    }
    let Some(nt) = &spec.network_topology else {
        return Ok(ask);
    };
    let hard = match nt.mode.as_ref().map(|m| (m, m.value.as_str())) {
        None | Some((_, "hard")) => true,
        Some((_, "soft")) => false,
        Some((m, other)) => {
            return Err(at_span(
                &pg.origin,
                1,
                m,
                format!("PodGroup `{id}`: networkTopology mode `{other}` is neither hard nor soft"),
            )
            .with("unknown mode", "hard or soft"));
        }
    };
    let no_tiers = || {
        at_object(
            &pg.origin,
            format!(
                "PodGroup `{id}` asks for a networkTopology, but no level comes from HyperNodes ({})",
                fabric.described()
            ),
        )
        .with(
            "no HyperNode levels",
            "export the HyperNodes with the nodes: `kubectl get hypernodes -o yaml`",
        )
    };
    let level = match &nt.highest_tier_allowed {
        Some(t) if t.value < 1 => {
            return Err(at_span(
                &pg.origin,
                1,
                t,
                format!("PodGroup `{id}`: highestTierAllowed {} is below 1", t.value),
            )
            .with("not a tier", "tier 1 is the innermost above the nodes"));
        }
        Some(t) => fabric.tier_level(t.value).ok_or_else(no_tiers)?,
        None => {
            let (outer, inner) = fabric.tier_range().ok_or_else(no_tiers)?;
            fabric
                .tier_level(if hard { outer } else { inner })
                .ok_or_else(no_tiers)?
        }
    };
    if hard {
        ask.required = Some(level.to_string());
    } else {
        ask.preferred = Some(level.to_string());
    }
    Ok(ask)
}
