//! Pods → workload classes, running pods and preemptors: GPU shares, the moment the most GPUs
//! are held, and the best-fit scheduler that places running pods.

use std::collections::BTreeMap;

use super::nodes::NodeList;
use super::options::{AlibabaOptions, GpuShares, default_qos_table};
use super::table::PodRow;
use crate::import::build::{ClassRegistry, Ledger, QosMapping};
use crate::import::error::ImportError;
use crate::import::summary::ImportSummary;

/// Whole GPUs a pod takes (a share takes one), or `None` when shares are dropped.
fn whole_gpus(pod: &PodRow, shares: GpuShares) -> Option<u64> {
    let share = pod.num_gpu >= 1 && pod.gpu_milli < 1000;
    match (share, shares) {
        (true, GpuShares::Drop) => None,
        _ => Some(pod.num_gpu),
    }
}

/// The earliest moment at which the scheduled pods hold the most whole GPUs.
pub(super) fn peak_moment(pods: &[PodRow], shares: GpuShares) -> f64 {
    // i128: the counts are u64 cells of the trace; a sum of them must neither wrap nor
    // overflow.
    let mut events: Vec<(f64, i128)> = Vec::new();
    for p in pods {
        let (Some(created), Some(scheduled)) = (p.creation, p.scheduled) else {
            continue;
        };
        let Some(g) = whole_gpus(p, shares) else {
            continue;
        };
        let start = created.max(scheduled);
        let end = p.deletion.unwrap_or(f64::INFINITY);
        if end > start && g > 0 {
            events.push((start, i128::from(g)));
            events.push((end, -i128::from(g)));
        }
    }
    // Ends before starts at one time: a pod that leaves at t no longer holds its GPUs at t.
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut held, mut best, mut at) = (0i128, i128::MIN, 0.0);
    for (t, d) in events {
        held += d;
        if d > 0 && held > best {
            best = held;
            at = t;
        }
    }
    at
}

/// A pod's workload class and its (GPUs, cores).
type ClassAndShape = (String, (u32, u32));

/// Pods → workload classes, running pods and preemptors: the QoS table, GPU shares and CPU
/// rounding, the best-fit scheduler with `gpu_spec`, and the summary's counts of each.
pub(super) struct PodMapper<'a> {
    options: &'a AlibabaOptions,
    qos_table: BTreeMap<String, QosMapping>,
    models: &'a [String],
    pub(super) classes: ClassRegistry,
    pub(super) ledger: Ledger,
    not_fitting: Vec<String>,
    pub(super) preemptors: Vec<String>,
    constrained_preemptors: u64,
}

impl<'a> PodMapper<'a> {
    /// A mapper onto the nodes of `nodes`, with the default QoS table under `--qos`.
    pub(super) fn new(options: &'a AlibabaOptions, nodes: &'a NodeList) -> Self {
        let mut qos_table = default_qos_table();
        qos_table.extend(options.qos.clone());
        PodMapper {
            options,
            qos_table,
            models: &nodes.models,
            classes: ClassRegistry::default(),
            ledger: Ledger::new(&nodes.builder),
            not_fitting: Vec::new(),
            preemptors: Vec::new(),
            constrained_preemptors: 0,
        }
    }

    /// The options it maps under.
    pub(super) fn options(&self) -> &'a AlibabaOptions {
        self.options
    }

    /// Whether the preemptors are as many as `--next` asks for.
    pub(super) fn has_all_preemptors(&self) -> bool {
        self.preemptors.len() >= self.options.next
    }

    /// Counts and warns of what the mapping left out or could not express: running pods that
    /// fit no node, preemptors' `gpu_spec`, fewer preemptors than `--next`.
    pub(super) fn report_leftovers(&self, summary: &mut ImportSummary) {
        let not_fitting = &self.not_fitting;
        summary.dropped("running_pods_that_do_not_fit", not_fitting.len() as u64);
        if !not_fitting.is_empty() {
            summary.warn(format!(
                "{} running pod(s) fit no node (first: {}); left out",
                not_fitting.len(),
                not_fitting
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let constrained_preemptors = self.constrained_preemptors;
        if constrained_preemptors > 0 {
            summary.dropped("preemptor_gpu_spec_constraints", constrained_preemptors);
            summary.warn(format!(
                "{constrained_preemptors} preemptor(s) allow only some GPU models (gpu_spec); a workload class cannot say so, so they are planned without it (running pods honour it)"
            ));
        }
        if self.preemptors.len() < self.options.next {
            summary.warn(format!(
                "only {} pod(s) arrive after the moment; --next asked for {}",
                self.preemptors.len(),
                self.options.next
            ));
        }
    }

    /// The class of a pod of QoS `qos` (the default table, overridden by `--qos`), or `None`
    /// when it is left out (a dropped GPU share, no resources).
    fn class_of(
        &mut self,
        pod: &PodRow,
        qos: &str,
        summary: &mut ImportSummary,
    ) -> Result<Option<ClassAndShape>, ImportError> {
        let mapping = self.qos_table.get(qos).copied().ok_or_else(|| {
            ImportError::input(
                format!("QoS class `{qos}` has no mapping"),
                Some(format!(
                    "known classes: {}; add one with --qos {qos}=PRIORITY:TOPOLOGY[:preemptible]",
                    self.qos_table
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            )
        })?;
        let share = pod.num_gpu >= 1 && pod.gpu_milli < 1000;
        let Some(gpus) = whole_gpus(pod, self.options.gpu_shares) else {
            summary.dropped("gpu_share_pods", 1);
            return Ok(None);
        };
        if share {
            summary.rounded("gpu_shares_to_one_whole_gpu", 1);
        }
        let cores = pod.cpu_milli.div_ceil(1000);
        if !pod.cpu_milli.is_multiple_of(1000) {
            summary.rounded("pod_cpu_to_whole_cores", 1);
        }
        if gpus == 0 && cores == 0 {
            summary.dropped("pods_without_cpu_or_gpu", 1);
            return Ok(None);
        }
        let shape = (
            gpus.min(u64::from(u32::MAX)) as u32,
            cores.min(u64::from(u32::MAX)) as u32,
        );
        Ok(Some((
            self.classes.class_of(qos, mapping, shape.0, shape.1),
            shape,
        )))
    }

    /// Places a running pod: best fit among the nodes of an allowed model, then the node
    /// allocator on that node. Returns whether it fit.
    pub(super) fn run(
        &mut self,
        pod: &PodRow,
        qos: &str,
        start: Option<f64>,
        summary: &mut ImportSummary,
    ) -> Result<(), ImportError> {
        let Some((class, (g, c))) = self.class_of(pod, qos, summary)? else {
            return Ok(());
        };
        let models = self.models;
        let allowed = |i: usize| pod.gpu_spec.is_empty() || pod.gpu_spec.contains(&models[i]);
        let node = self.ledger.best_fit(g, c, &allowed);
        match node.and_then(|n| self.ledger.allocator_placement(n, g, c).map(|p| (n, p))) {
            Some((n, p)) => {
                self.ledger.take(n, (&class, None), p, start);
                summary.mapped("running_pods", 1);
            }
            None => self.not_fitting.push(pod.name.clone()),
        }
        Ok(())
    }

    /// Adds a preemptor; a `gpu_spec` it carries is counted (a class cannot express it).
    pub(super) fn preempt(
        &mut self,
        pod: &PodRow,
        qos: &str,
        summary: &mut ImportSummary,
    ) -> Result<(), ImportError> {
        if let Some((class, _)) = self.class_of(pod, qos, summary)? {
            if !pod.gpu_spec.is_empty() {
                self.constrained_preemptors += 1;
            }
            self.preemptors.push(class);
        }
        Ok(())
    }
}
