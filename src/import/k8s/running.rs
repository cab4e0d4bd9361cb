//! Running pods onto whole cores: exclusive pods keep their CPUs, the pods of each node's
//! shared pool share out its cores, before `placement` places them.

use std::collections::BTreeMap;

use super::placement::{Held, ToPlace};
use super::pods::apportion_shared;
use crate::import::build::{ClassRegistry, ClassRules, QosMapping};
use crate::import::summary::ImportSummary;

/// A running pod before its cores are known: exclusive pods hold their whole CPUs, the shared
/// pool of a node is apportioned over its pods once all are read.
pub(super) struct RunningFacts {
    pub(super) node: usize,
    pub(super) hint: String,
    pub(super) mapping: QosMapping,
    pub(super) rules: ClassRules,
    pub(super) gpus: u32,
    pub(super) millis: u64,
    pub(super) exclusive: bool,
    pub(super) start: Option<f64>,
    pub(super) name: String,
    /// The DRA devices it holds (ids on its node), and the cores its CPU claims hold per NUMA
    /// node.
    pub(super) held: Option<Held>,
}

/// The running pods with whole cores: exclusive ones their CPUs, the pods of each node's
/// shared pool their part of ⌈Σ millicores / 1000⌉; a pod left with no core and no GPU holds
/// nothing coplan allocates (its millicores are in a core another pod of the pool holds).
pub(super) fn running_to_place(
    pods: Vec<RunningFacts>,
    classes: &mut ClassRegistry,
    summary: &mut ImportSummary,
) -> Vec<ToPlace> {
    let mut shared: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, p) in pods.iter().enumerate() {
        if !p.exclusive {
            shared.entry(p.node).or_default().push(i);
        }
    }
    let mut cores = vec![0u64; pods.len()];
    for (i, p) in pods.iter().enumerate() {
        if p.exclusive {
            cores[i] = p.millis / 1000;
        }
        // The CPU driver's cores are the pod's exclusive cores.
        if let Some(h) = &p.held
            && !h.cores.is_empty()
        {
            cores[i] = h.cores.iter().map(|c| c.1).sum();
        }
    }
    for members in shared.values() {
        let millis: Vec<u64> = members.iter().map(|&i| pods[i].millis).collect();
        for (&i, c) in members.iter().zip(apportion_shared(&millis)) {
            cores[i] = c;
        }
    }
    let mut out = Vec::with_capacity(pods.len());
    for (p, c) in pods.into_iter().zip(cores) {
        if c == 0 && p.gpus == 0 {
            summary.mapped("shared_pool_pods_within_another_pods_core", 1);
            continue;
        }
        let c = c.min(u64::from(u32::MAX)) as u32;
        let kind = p.rules.gpu_resource.clone();
        let alignment = p.rules.device_alignment;
        let class = classes.class_with_rules(&p.hint, p.mapping, (p.gpus, c), p.rules);
        out.push(ToPlace {
            node: p.node,
            class,
            ask: (p.gpus, c),
            start: p.start,
            name: p.name,
            kind,
            alignment,
            held: p.held,
        });
    }
    out
}
