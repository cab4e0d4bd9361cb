//! Pending pods → `[[preempt]]` entries, gangs among them: the pods that ask for one gang
//! (`gang_asks`) become one entry at the place of the first of them, `pods` = how many, with
//! the levels they ask for; every other pending pod stays an entry of its own. The pods of a
//! gang must be of one workload class and ask the same; a Volcano PodGroup's gang is its
//! first `minMember` pending pods.

use std::collections::{BTreeMap, BTreeSet};

use super::fabric_domains::Fabric;
use super::fabric_read::Placed;
use super::gang_asks::{Ask, Pending, ask_of};
use super::read::at_object;
use crate::import::build::preempt_entries;
use crate::import::error::ImportError;
use crate::import::fabric_objects::KUEUE_SLICE_SIZE;
use crate::import::summary::ImportSummary;
use crate::spec::preemption::PreemptEntry;

/// One gang: its ask and the preemptors (indices) in it, in creation order.
struct Gang {
    ask: Ask,
    members: Vec<usize>,
}

/// The preemptors (class, name) in creation order as `[[preempt]]` entries, gangs made of
/// the pods that ask for them. `pending` gives each named preemptor's pod; `taken` holds
/// the names a gang may not take (the running pods').
pub(super) fn gang_entries(
    preemptors: &[(String, Option<String>)],
    pending: &BTreeMap<&str, Pending<'_>>,
    (fabric, pod_groups): (&Fabric, &BTreeMap<String, Placed>),
    taken: BTreeSet<String>,
    summary: &mut ImportSummary,
) -> Result<Vec<PreemptEntry>, ImportError> {
    let mut gangs: Vec<Gang> = Vec::new();
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (class, name)) in preemptors.iter().enumerate() {
        let Some(p) = name.as_deref().and_then(|n| pending.get(n)) else {
            continue;
        };
        let Some(ask) = ask_of(*p, fabric, pod_groups)? else {
            continue;
        };
        match by_key.get(&ask.key) {
            Some(&g) => {
                let gang = &mut gangs[g];
                let first = gang.members[0];
                same_gang(&gang.ask, &preemptors[first], (&ask, class), *p)?;
                gang.members.push(i);
            }
            None => {
                by_key.insert(ask.key.clone(), gangs.len());
                gangs.push(Gang {
                    ask,
                    members: vec![i],
                });
            }
        }
    }
    if gangs.is_empty() {
        return Ok(preempt_entries(preemptors));
    }
    warn_missing_groups(&gangs, pod_groups, summary);
    for gang in &mut gangs {
        sized(gang, preemptors, summary);
    }
    let in_gang: BTreeSet<usize> = gangs.iter().flat_map(|g| g.members.clone()).collect();
    let mut names = taken;
    names.extend(
        preemptors
            .iter()
            .enumerate()
            .filter(|(i, _)| !in_gang.contains(i))
            .filter_map(|(_, (_, n))| n.clone()),
    );
    let mut starts: BTreeMap<usize, PreemptEntry> = BTreeMap::new();
    for gang in &gangs {
        check_slices(gang, preemptors, pending)?;
        let first = gang.members[0];
        let name = unique(&gang.ask.name, &mut names);
        summary.list("gangs", gang_text(&name, &gang.ask, gang.members.len()));
        summary.mapped("gangs", 1);
        summary.mapped("pods_in_gangs", gang.members.len() as u64);
        starts.insert(
            first,
            PreemptEntry {
                name: Some(name),
                pods: Some(gang.members.len() as i64),
                required_level: gang.ask.required.clone(),
                preferred_level: gang.ask.preferred.clone(),
                slice_size: gang.ask.slice.as_ref().map(|s| s.0),
                slice_level: gang.ask.slice.as_ref().map(|s| s.1.clone()),
                ..PreemptEntry::pods_of(&preemptors[first].0, 1)
            },
        );
    }
    let mut out = Vec::new();
    let mut run: Vec<(String, Option<String>)> = Vec::new();
    for (i, p) in preemptors.iter().enumerate() {
        if let Some(entry) = starts.remove(&i) {
            out.extend(preempt_entries(&std::mem::take(&mut run)));
            out.push(entry);
        } else if !in_gang.contains(&i) {
            run.push(p.clone());
        }
    }
    out.extend(preempt_entries(&run));
    Ok(out)
}

/// A later pod of a gang is of the first pod's class and asks the same.
fn same_gang(
    first: &Ask,
    (first_class, first_name): &(String, Option<String>),
    (ask, class): (&Ask, &String),
    (pod, name, _): Pending<'_>,
) -> Result<(), ImportError> {
    let first_name = first_name.as_deref().unwrap_or_default();
    let why = if class != first_class {
        format!("its workload class is `{class}`, `{first_name}`'s `{first_class}`")
    } else if ask != first {
        format!("it asks for other levels than `{first_name}`")
    } else {
        return Ok(());
    };
    Err(at_object(
        &pod.origin,
        format!("pod `{name}` is in gang `{}` but {why}", first.name),
    )
    .with(
        "not like the gang's first pod",
        "a gang's pods ask for the same resources, rules and levels",
    ))
}

/// A Volcano gang of more pending pods than `minMember`: the first `minMember` are the gang,
/// the others single pods (with a warning); of fewer, the pending ones (with a warning: the
/// others run already, or are not in the snapshot).
fn sized(gang: &mut Gang, preemptors: &[(String, Option<String>)], summary: &mut ImportSummary) {
    let Some(min) = gang.ask.min_member else {
        return;
    };
    let n = gang.members.len() as i64;
    if n > min {
        summary.warn(format!(
            "PodGroup `{}` has {n} pending pods and minMember {min}: the first {min} are the gang, the {} after them are planned one by one",
            gang.ask.name,
            n - min
        ));
        summary.defaulted(
            "pods_beyond_min_member_planned_one_by_one",
            (n - min) as u64,
        );
        gang.members.truncate(min as usize);
    } else if n < min {
        summary.warn(format!(
            "PodGroup `{}` has minMember {min} but {n} pending pods: the gang is the {n} (`{}` first)",
            gang.ask.name,
            preemptors[gang.members[0]].1.as_deref().unwrap_or_default()
        ));
        summary.defaulted("gangs_smaller_than_min_member", 1);
    }
}

/// Slices divide the gang.
fn check_slices(
    gang: &Gang,
    preemptors: &[(String, Option<String>)],
    pending: &BTreeMap<&str, Pending<'_>>,
) -> Result<(), ImportError> {
    let Some((size, _)) = &gang.ask.slice else {
        return Ok(());
    };
    let n = gang.members.len() as i64;
    if n % size == 0 {
        return Ok(());
    }
    let first = preemptors[gang.members[0]].1.as_deref().unwrap_or_default();
    let Some((pod, name, doc_line)) = pending.get(first) else {
        return Ok(());
    };
    let message = format!(
        "gang `{}` has {n} pending pods, which slices of {size} do not divide",
        gang.ask.name
    );
    let at = pod.object.metadata.annotations.get(KUEUE_SLICE_SIZE);
    let error = match at {
        Some(v) => super::read::at_span(
            &pod.origin,
            *doc_line,
            v,
            format!("pod `{name}`: {message}"),
        ),
        None => at_object(&pod.origin, message),
    };
    Err(error.with(
        "does not divide the gang",
        "every slice is whole: the podset's pods are a multiple of the slice size",
    ))
}

/// Warns once per PodGroup that pods name but the snapshot lacks.
fn warn_missing_groups(
    gangs: &[Gang],
    pod_groups: &BTreeMap<String, Placed>,
    summary: &mut ImportSummary,
) {
    for gang in gangs {
        if gang.ask.key.starts_with("volcano ") && !pod_groups.contains_key(&gang.ask.name) {
            summary.warn(format!(
                "pods name PodGroup `{}`, which is not in the snapshot: its pending pods are one gang, with no level",
                gang.ask.name
            ));
            summary.defaulted("gangs_of_a_pod_group_not_in_the_snapshot", 1);
        }
    }
}

/// `name`, or `name-gang`, `name-gang-2`, … when a pod has it already.
fn unique(name: &str, names: &mut BTreeSet<String>) -> String {
    let mut candidate = name.to_string();
    let mut k = 1;
    while names.contains(&candidate) {
        candidate = if k == 1 {
            format!("{name}-gang")
        } else {
            format!("{name}-gang-{k}")
        };
        k += 1;
    }
    names.insert(candidate.clone());
    candidate
}

/// `4 pods in one block (rather one rack) in slices of 2 per host`, for the summary.
fn gang_text(name: &str, ask: &Ask, pods: usize) -> String {
    let mut out = format!("{name}: {pods} pod{}", if pods == 1 { "" } else { "s" });
    if let Some(r) = &ask.required {
        out += &format!(" in one {r}");
    }
    if let Some(p) = &ask.preferred {
        out += &format!(" (rather one {p})");
    }
    if let Some((s, l)) = &ask.slice {
        out += &format!(" in slices of {s} per {l}");
    }
    out
}
