//! The import itself: the node list read into a cluster, the pods that run at the moment (or
//! fill the cluster in arrival order) placed, and the next pods to arrive made preemptors.

use super::nodes::{NodeList, read_nodes};
use super::options::{AlibabaOptions, At};
use super::pods::{PodMapper, peak_moment};
use super::table::{PodRow, read_pods};
use crate::import::build::{preemption_workload, slug};
use crate::import::error::ImportError;
use crate::import::imported::Imported;
use crate::import::summary::ImportSummary;

/// Imports the node list and a pod list (full or sampled).
pub fn import(
    nodes: (&str, &str),
    pods: (&str, &str),
    options: &AlibabaOptions,
) -> Result<Imported, ImportError> {
    if !(options.fill > 0.0 && options.fill <= 1.0) {
        return Err(ImportError::input(
            format!("--fill must be in (0, 1], got {}", options.fill),
            None,
        ));
    }
    let mut summary = ImportSummary::new(
        "alibaba-openb",
        vec![nodes.0.to_string(), pods.0.to_string()],
    );
    let node_list = read_nodes(nodes, options, &mut summary)?;
    let (rows, timed) = read_pods(1, pods.0, pods.1)?;
    summary.read("pods", rows.len() as u64);
    let mut mapper = PodMapper::new(options, &node_list);
    let order = arrival_order(&rows, timed);
    let arrivals: Vec<&PodRow> = order.iter().map(|&i| &rows[i]).collect();
    let at = if timed && !options.as_sequence {
        let moment = match options.at.unwrap_or(At::Peak) {
            At::Time(t) => t,
            At::Peak => {
                summary.defaulted("moment_is_the_gpu_peak", u64::from(options.at.is_none()));
                peak_moment(&rows, options.gpu_shares)
            }
        };
        at_the_moment(moment, &arrivals, &mut mapper, &mut summary)?;
        Some(moment)
    } else {
        if options.at.is_some() {
            summary.warn(if timed {
                "--as-sequence: --at is ignored; pods arrive in creation order until --fill".into()
            } else {
                "the sampled pod list has no times: --at is ignored; pods arrive in file order until --fill".into()
            });
        }
        in_arrival_order(&arrivals, &mut mapper, &mut summary)?;
        None
    };
    mapper.report_leftovers(&mut summary);
    Ok(imported(&node_list, mapper, at, summary, (nodes.0, pods.0)))
}

/// Arrival order: creation time (ties in file order) for a timed list, file order for a
/// sampled one.
fn arrival_order(rows: &[PodRow], timed: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    if timed {
        order.sort_by(|&a, &b| {
            let created = |i: usize| rows[i].creation.unwrap_or(f64::INFINITY);
            created(a).total_cmp(&created(b)).then(a.cmp(&b))
        });
    }
    order
}

/// A pod's QoS class: its own, or (a sampled list has no QoS column) `--sampled-qos`'s.
fn qos_of(pod: &PodRow, default: &str) -> String {
    pod.qos.clone().unwrap_or(default.to_string())
}

/// A timed list at `moment`: the pods alive then run, the pods created after it preempt.
fn at_the_moment(
    moment: f64,
    arrivals: &[&PodRow],
    mapper: &mut PodMapper<'_>,
    summary: &mut ImportSummary,
) -> Result<(), ImportError> {
    let (fill_qos, next_qos) = &mapper.options().sampled_qos;
    for pod in arrivals {
        let alive = pod.creation.is_some_and(|c| c <= moment)
            && pod.scheduled.is_some_and(|s| s <= moment)
            && pod.deletion.is_none_or(|d| moment < d);
        if alive {
            summary.read("pods_running_at_the_moment", 1);
            mapper.run(pod, &qos_of(pod, fill_qos), pod.scheduled, summary)?;
        }
    }
    for pod in arrivals {
        if mapper.has_all_preemptors() {
            break;
        }
        if pod.creation.is_some_and(|c| c > moment) {
            mapper.preempt(pod, &qos_of(pod, next_qos), summary)?;
        }
    }
    Ok(())
}

/// An arrival sequence (a sampled list, or a timed one `--as-sequence`): pods run in arrival
/// order until the GPUs are filled to `--fill`, the next ones preempt.
fn in_arrival_order(
    arrivals: &[&PodRow],
    mapper: &mut PodMapper<'_>,
    summary: &mut ImportSummary,
) -> Result<(), ImportError> {
    let options = mapper.options();
    let (fill_qos, next_qos) = &options.sampled_qos;
    let mut arrivals = arrivals.iter().peekable();
    while let Some(pod) = arrivals.next_if(|_| mapper.ledger.gpu_utilization() < options.fill) {
        mapper.run(pod, &qos_of(pod, fill_qos), None, summary)?;
    }
    if mapper.ledger.gpu_utilization() < options.fill {
        summary.warn(format!(
            "the pod list ran out at {:.1} % of the GPUs, below --fill {}",
            100.0 * mapper.ledger.gpu_utilization(),
            options.fill
        ));
    }
    for pod in arrivals {
        if mapper.has_all_preemptors() {
            break;
        }
        mapper.preempt(pod, &qos_of(pod, next_qos), summary)?;
    }
    Ok(())
}

/// The cluster and the workload of what `mapper` placed and queued, with the summary's
/// totals; `at` is the moment of a timed list read at one.
fn imported(
    node_list: &NodeList,
    mapper: PodMapper<'_>,
    at: Option<f64>,
    mut summary: ImportSummary,
    (nodes_file, pods_file): (&str, &str),
) -> Imported {
    let options = mapper.options();
    let PodMapper {
        classes,
        mut ledger,
        preemptors,
        ..
    } = mapper;
    let utilization = ledger.gpu_utilization();
    summary.mapped("servers", node_list.builder.node_count() as u64);
    summary.mapped("server_types", node_list.builder.types().len() as u64);
    summary.mapped("preemptors", preemptors.len() as u64);
    summary.mapped(
        "gpus_in_use_permille",
        (utilization * 1000.0).round() as u64,
    );
    if let Some(t) = at {
        summary.list("moment_s", format!("{t}"));
    }
    let cluster = node_list
        .builder
        .build("alibaba-openb", &node_list.templates);
    let running = std::mem::take(&mut ledger.running);
    let classes = classes.into_classes();
    summary.mapped("workload_classes", classes.len() as u64);
    let stem = slug(pods_file.rsplit('/').next().unwrap_or(pods_file));
    let unnamed: Vec<(String, Option<String>)> =
        preemptors.iter().map(|c| (c.clone(), None)).collect();
    let name = match at {
        Some(t) => format!(
            "alibaba openb {stem} at t = {t} s, next {}",
            preemptors.len()
        ),
        None => format!(
            "alibaba openb {stem} filled to {}, next {}",
            options.fill,
            preemptors.len()
        ),
    };
    let workload = preemption_workload(name, at, classes, running, &unnamed);
    Imported::new(
        (cluster, workload),
        summary,
        ("alibaba-openb", &format!("{nodes_file} and {pods_file}")),
        &[
            "# Alibaba GPU cluster trace 2023 (openb): Weng et al., \"Beware of Fragmentation: Scheduling",
            "# GPU-Sharing Workloads with Fragmentation Gradient Descent\", USENIX ATC 2023.",
            "# How nodes and pods map to coplan: docs/import.md.",
        ],
    )
}
