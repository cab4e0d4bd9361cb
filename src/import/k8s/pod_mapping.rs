//! Each pod, in creation order, to what coplan plans with: a Pending pod without a node to a
//! preemptor of its workload class, a pod with a node to a running pod whose cores are known
//! once its node's shared pool is (`running`); finished pods and pods that ask for nothing
//! coplan allocates are counted and left out.

use std::collections::{BTreeMap, BTreeSet};

use super::claims::DraAsk;
use super::conventions::{QosClass, SYSTEM_PRIORITY, topology_qos};
use super::devices::DeviceIds;
use super::options::CpuManager;
use super::placement::Held;
use super::pod_devices::{DeviceAsks, PodDevices};
use super::pods::{Prepared, has_sidecars, not_modelled, pod_request, priority, qos_class, runs};
use super::read::{PodObject, Snapshot};
use super::rules::pod_rules;
use super::running::RunningFacts;
use crate::import::build::{ClassRegistry, ClassRules, Ledger, QosMapping};
use crate::import::error::ImportError;
use crate::import::quantity::ceil_units;
use crate::import::summary::ImportSummary;
use crate::spec::eligibility::PreemptionPolicy;
use crate::spec::preemption::DeviceAlignment;

/// The pods mapped so far, and what mapping the next one needs.
pub(super) struct PodMapper<'a> {
    pub(super) snapshot: &'a Snapshot,
    pub(super) devices: &'a DeviceAsks<'a>,
    /// The nodes (by name) running pods are placed on.
    pub(super) ledger: &'a Ledger,
    /// Per node, where its DRA devices went on its server type.
    pub(super) device_ids: &'a BTreeMap<String, DeviceIds>,
    pub(super) cpu_manager: CpuManager,
    /// The earliest creation time: pods start this long after it.
    pub(super) t0: f64,
    /// Claims already given to a pod.
    pub(super) claims_taken: BTreeSet<String>,
    pub(super) classes: ClassRegistry,
    /// Each preemptor's class and name, in creation order.
    pub(super) preemptors: Vec<(String, Option<String>)>,
    pub(super) running: Vec<RunningFacts>,
    /// The latest start: the workload's clock.
    pub(super) now_s: f64,
}

/// What a pod asks for, in coplan's units.
struct Ask {
    /// Millicores, rounded up as Kubernetes counts them.
    millis: u64,
    /// Whole devices.
    gpus: u32,
    /// Their kind (`None`: whole GPUs of the default kind).
    kind: Option<String>,
    /// Where its devices must lie together.
    alignment: Option<DeviceAlignment>,
    /// Exclusive cores its CPU claims ask for.
    claim_cores: u64,
    /// Its DRA claims' devices (running pods: the ones their allocations hold).
    dra: Option<DraAsk>,
}

/// The class a pod falls into: its hint (its PriorityClass, else `p{priority}`), mapping and
/// rules.
struct ClassFacts {
    hint: String,
    mapping: QosMapping,
    rules: ClassRules,
}

impl PodMapper<'_> {
    /// Maps one pod (as [`pods_in_order`](super::pods::pods_in_order) prepared it).
    pub(super) fn map(
        &mut self,
        (created, name, pod, doc_line): &Prepared<'_>,
        summary: &mut ImportSummary,
    ) -> Result<(), ImportError> {
        let object = &pod.object;
        summary.read("pods", 1);
        let Some(running) = runs(object, summary) else {
            return Ok(());
        };
        let node_name = object.spec.node_name.as_deref();
        let Some(ask) = self.ask((pod, *doc_line, name), running, summary)? else {
            return Ok(());
        };
        let qos = qos_class(object, summary);
        let priority = priority((pod, name), &self.snapshot.priority_classes, summary)?;
        let mut rules = pod_rules(&pod.origin, name, object, &self.snapshot.priority_classes)?;
        rules.gpu_resource = ask.kind.clone();
        rules.device_alignment = ask.alignment.filter(|_| ask.gpus > 0);
        if rules.preemption_policy == PreemptionPolicy::Never {
            summary.honoured("pods_with_preemption_policy_never", 1);
        }
        if !rules.node_selector.is_empty() || !rules.node_affinity.is_empty() {
            summary.honoured("pods_with_node_selectors_or_affinity", 1);
        }
        not_modelled(object, name, summary);
        let class = ClassFacts {
            hint: object
                .spec
                .priority_class_name
                .clone()
                .unwrap_or_else(|| format!("p{priority}")),
            mapping: QosMapping {
                priority,
                // The node's Topology Manager policy is its server type's (DESIGN §12.1): its
                // kubelet decides admission, so the class keeps the pod's own QoS.
                topology_qos: topology_qos(qos, None),
                preemptible: priority < SYSTEM_PRIORITY,
            },
            rules,
        };
        // Under the static CPU manager a Guaranteed pod with whole CPUs gets exclusive cores;
        // every other pod draws millicores from its node's shared pool.
        let exclusive = self.cpu_manager == CpuManager::Static
            && qos == QosClass::Guaranteed
            && ask.millis.is_multiple_of(1000);
        let start = created.map(|t| t - self.t0);
        if let Some(t) = start {
            self.now_s = self.now_s.max(t);
        }
        if !running {
            self.queue_preemptor(name, &ask, class, exclusive, summary);
        } else if let Some(node_name) = node_name {
            self.add_running((name, node_name, start), ask, class, exclusive, summary);
        }
        Ok(())
    }

    /// What a pod asks for, or `None` when it is left out (counted): claims that cannot be
    /// planned, or no CPU or GPU at all.
    fn ask(
        &mut self,
        (pod, doc_line, name): (&PodObject, usize, &str),
        running: bool,
        summary: &mut ImportSummary,
    ) -> Result<Option<Ask>, ImportError> {
        let cpu = pod_request(pod, doc_line, "cpu")?;
        let node = running
            .then_some(pod.object.spec.node_name.as_deref())
            .flatten();
        let devices =
            match self
                .devices
                .of((pod, doc_line, name), node, &mut self.claims_taken, summary)?
            {
                Ok(d) => d,
                Err(why) => {
                    summary.dropped("pending_pods_whose_claims_cannot_be_planned", 1);
                    summary.warn(format!("{why}; the pod is left out"));
                    return Ok(None);
                }
            };
        let PodDevices {
            kind,
            count,
            alignment,
            claim_cores,
            dra,
        } = devices;
        if has_sidecars(pod) {
            summary.honoured("pods_with_native_sidecars", 1);
        }
        if !pod.object.spec.overhead.is_empty() {
            summary.honoured("pods_with_overhead", 1);
        }
        // Kubernetes counts CPU in whole millicores, rounding a finer request up.
        let millis = (cpu * 1000.0 - 1e-6).ceil().max(0.0) as u64;
        let (gpus, gpu_rounded) = ceil_units(count);
        if gpu_rounded {
            summary.rounded("pod_gpus_to_whole_gpus", 1);
        }
        if millis == 0 && gpus == 0 && claim_cores == 0 {
            summary.dropped("pods_without_cpu_or_gpu_requests", 1);
            return Ok(None);
        }
        Ok(Some(Ask {
            millis,
            gpus: gpus.min(u64::from(u32::MAX)) as u32,
            kind,
            alignment,
            claim_cores,
            dra,
        }))
    }

    /// A pending pod's class, queued: its share of a pool it has not joined yet is whole
    /// cores, rounded up; the CPU driver's cores, when it claims them, are its cores.
    fn queue_preemptor(
        &mut self,
        name: &str,
        ask: &Ask,
        class: ClassFacts,
        exclusive: bool,
        summary: &mut ImportSummary,
    ) {
        let cores = if ask.claim_cores > 0 {
            ask.claim_cores
        } else {
            ask.millis.div_ceil(1000)
        };
        let cores = cores.min(u64::from(u32::MAX)) as u32;
        if ask.claim_cores == 0 && !exclusive && !ask.millis.is_multiple_of(1000) {
            summary.rounded("preemptor_cpu_rounded_up_to_whole_cores", 1);
        }
        let ClassFacts {
            hint,
            mapping,
            rules,
        } = class;
        let class = self
            .classes
            .class_with_rules(&hint, mapping, (ask.gpus, cores), rules);
        self.preemptors.push((class, Some(name.to_string())));
    }

    /// A pod on `node_name`, kept with the DRA devices and cores its claims hold there; a
    /// node not in the snapshot drops it (counted).
    fn add_running(
        &mut self,
        (name, node_name, start): (&str, &str, Option<f64>),
        ask: Ask,
        class: ClassFacts,
        exclusive: bool,
        summary: &mut ImportSummary,
    ) {
        let Some(node) = self.ledger.node_index(node_name) else {
            summary.dropped("pods_on_nodes_not_in_the_snapshot", 1);
            return;
        };
        let held = ask.dra.map(|a| {
            let ids = self.device_ids.get(node_name);
            let devices: Vec<Option<usize>> = a
                .held
                .iter()
                .map(|d| ids.and_then(|m| m.ids.get(d).copied()))
                .collect();
            let cores: Vec<(Option<usize>, u64)> = a
                .held_cpus
                .iter()
                .map(|(d, n)| (ids.and_then(|m| m.cpu_numa.get(d).copied()), *n))
                .collect();
            Held { devices, cores }
        });
        let exclusive = exclusive || held.as_ref().is_some_and(|h| !h.cores.is_empty());
        if exclusive {
            summary.mapped("running_pods_with_exclusive_cores", 1);
        } else {
            summary.mapped("running_pods_in_the_shared_cpu_pool", 1);
        }
        self.running.push(RunningFacts {
            node,
            hint: class.hint,
            mapping: class.mapping,
            rules: class.rules,
            gpus: ask.gpus,
            millis: ask.millis,
            exclusive,
            start,
            name: name.to_string(),
            held,
        });
    }
}
