//! Which pool a search resizes and the specs at each size: the only place that edits a spec,
//! so that server names stay stable, `[[running]]` pods find their nodes, and a pool shrunk
//! below its spec count re-places the pods of the servers it loses.

use super::error::CapacityError;
use crate::plan::error::PlanningError;
use crate::spec::preemption::{Admission, IdsOrCount, RunningPod, TopologyQos};
use crate::spec::{ClusterSpec, PreemptionSpec, validate};
use crate::topology::eligibility::Eligibility;
use crate::topology::state::{ClusterState, Pod, running_state};
use crate::topology::{Cluster, CoreSet, GpuSet, Request, ServerId, place};

/// The pool a `--pool` argument names: an index, or a pool's `name_prefix`.
pub fn select_pool(spec: &ClusterSpec, arg: Option<&str>) -> Result<usize, CapacityError> {
    let listing = || {
        spec.pool
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{i} (`{}`, {} × {})", p.name_prefix, p.count, p.server_type))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(arg) = arg else {
        return match spec.pool.len() {
            1 => Ok(0),
            _ => Err(CapacityError::Pool {
                arg: String::new(),
                reason: format!(
                    "the cluster has {} pools; name one: {}",
                    spec.pool.len(),
                    listing()
                ),
            }),
        };
    };
    if let Ok(i) = arg.trim().parse::<usize>() {
        return if i < spec.pool.len() {
            Ok(i)
        } else {
            Err(CapacityError::Pool {
                arg: arg.into(),
                reason: format!("no pool {i}; the pools are {}", listing()),
            })
        };
    }
    let matching: Vec<usize> = (0..spec.pool.len())
        .filter(|&i| spec.pool[i].name_prefix == arg)
        .collect();
    match matching.as_slice() {
        [i] => Ok(*i),
        [] => Err(CapacityError::Pool {
            arg: arg.into(),
            reason: format!("no pool has this name_prefix; the pools are {}", listing()),
        }),
        _ => Err(CapacityError::Pool {
            arg: arg.into(),
            reason: format!(
                "several pools share this name_prefix; give an index: {}",
                listing()
            ),
        }),
    }
}

/// The cluster with pool `index` grown to `size` servers (at least its spec count). The
/// servers keep the spec's names (an index's zero-padding depends on the count) and added ones
/// continue the numbering, so `[[running]]` pods find their nodes at every size.
pub fn resize(spec: &ClusterSpec, index: usize, size: u32) -> Result<ClusterSpec, CapacityError> {
    let mut names = ClusterSpec::pool_server_names(&spec.pool[index]);
    let prefix = spec.pool[index].name_prefix.clone();
    let mut next = names.len();
    while names.len() < size as usize {
        let name = format!("{prefix}{next}");
        next += 1;
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.truncate(size as usize);
    with_names(spec, index, names)
}

/// The cluster with pool `index` holding exactly `names`, checked as a spec file is.
fn with_names(
    spec: &ClusterSpec,
    index: usize,
    names: Vec<String>,
) -> Result<ClusterSpec, CapacityError> {
    let mut out = spec.clone();
    let size = names.len() as u32;
    let before = ClusterSpec::pool_server_names(&spec.pool[index]);
    // The rules of a server that left the pool name no server any more.
    out.server
        .retain(|s| names.contains(&s.name) || !before.contains(&s.name));
    out.pool[index].count = i64::from(size);
    out.pool[index].names = Some(names);
    if let Some(finding) = validate::cluster(&out).first() {
        return Err(CapacityError::Resize {
            prefix: spec.pool[index].name_prefix.clone(),
            size,
            reason: format!("{} ({})", finding.message, finding.path),
        });
    }
    Ok(out)
}

/// Pods at or above this priority (Kubernetes' `system-node-critical`: a node's own daemons,
/// and the cores the kubelet reserves, as `import k8s` writes them) belong to their node:
/// they leave with it rather than being re-placed elsewhere.
pub const NODE_CRITICAL_PRIORITY: i64 = 2_000_001_000;

/// What shrinking a pool below its spec count did to the `[[running]]` pods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shrink {
    /// The servers taken out, emptiest first.
    pub removed: Vec<String>,
    /// Pods of the removed servers the node allocator put on a remaining server.
    pub replaced: Vec<String>,
    /// Pods of the removed servers that fit on no remaining server: they no longer run.
    pub displaced: Vec<String>,
}

/// Pool `index` at `size` servers with the workload's `[[running]]` pods that stay. At or
/// above the spec count the pool grows ([`resize`]) and the workload is unchanged (`None`).
/// Below it the emptiest servers go ([`shrink`]).
pub fn shape(
    spec: &ClusterSpec,
    workload: &PreemptionSpec,
    index: usize,
    size: u32,
) -> Result<(ClusterSpec, Option<PreemptionSpec>, Shrink), CapacityError> {
    let names = ClusterSpec::pool_server_names(&spec.pool[index]);
    if size as usize >= names.len() {
        return Ok((resize(spec, index, size)?, None, Shrink::default()));
    }
    let (cluster, workload, shrink) = shrink(spec, workload, index, size)?;
    Ok((cluster, Some(workload), shrink))
}

/// Pool `index` shrunk to `size` servers (below its spec count). The emptiest servers go:
/// fewest GPUs held by `[[running]]` pods, then fewest such pods, ties by name (the later name
/// first, so a pool without running pods loses its last servers). Their pods, in the order the
/// workload lists them, are re-placed where the default scheduler would bind them again: on a
/// remaining server of any pool that the scheduling rules let the pod onto and whose node
/// admits the node allocator's placement (a guaranteed pod at its required level under
/// `kubelet` admission), the best fit (fewest GPUs, then cores, left over; ties by name). A pod
/// that fits nowhere is displaced. Node-critical pods ([`NODE_CRITICAL_PRIORITY`]) leave with
/// their node. Every `[[running]]` pod of the result has explicit ids, so the state it gives
/// is the one computed here.
pub fn shrink(
    spec: &ClusterSpec,
    workload: &PreemptionSpec,
    index: usize,
    size: u32,
) -> Result<(ClusterSpec, PreemptionSpec, Shrink), CapacityError> {
    let invalid = |f| CapacityError::Plan(PlanningError::Invalid(f));
    let full = Cluster::from_spec(spec);
    // `running_state` adds the pods in list order, one id each: pod i is `[[running]]` i.
    let before = running_state(&full, workload).map_err(invalid)?;
    let pods: Vec<&Pod> = before.pods().map(|(_, p)| p).collect();
    if pods.len() != workload.running.len() {
        return Err(CapacityError::Plan(PlanningError::Internal(
            "the running pods do not match their [[running]] entries".into(),
        )));
    }
    let node_bound = |p: &Pod| p.priority >= NODE_CRITICAL_PRIORITY;
    let names = ClusterSpec::pool_server_names(&spec.pool[index]);
    // Per server of the pool: (GPUs held, pods) by pods that could move.
    let mut load: Vec<(u32, usize, &String)> = names
        .iter()
        .map(|n| {
            let on: Vec<&&Pod> = pods
                .iter()
                .filter(|p| !node_bound(p) && full.server(p.server).name == *n)
                .collect();
            (on.iter().map(|p| p.gpus.len()).sum(), on.len(), n)
        })
        .collect();
    load.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then_with(|| b.2.cmp(a.2)));
    let removed: Vec<String> = load
        .iter()
        .take(names.len().saturating_sub(size as usize))
        .map(|l| l.2.clone())
        .collect();
    let kept: Vec<String> = names
        .iter()
        .filter(|n| !removed.contains(n))
        .cloned()
        .collect();
    let cluster = with_names(spec, index, kept)?;
    let small = Cluster::from_spec(&cluster);
    let mut state = ClusterState::empty(&small);
    let mut placed: Vec<Option<(ServerId, GpuSet, CoreSet)>> = vec![None; pods.len()];
    // The pods that stay keep their GPUs and cores.
    for (i, p) in pods.iter().enumerate() {
        let name = &full.server(p.server).name;
        if removed.contains(name) {
            continue;
        }
        let server = small.server_id(name).ok_or_else(|| {
            CapacityError::Plan(PlanningError::Internal(format!(
                "server `{name}` is missing from the shrunk pool"
            )))
        })?;
        let stays = Pod {
            server,
            ..(*p).clone()
        };
        state.add(&small, stays).map_err(|e| {
            CapacityError::Plan(PlanningError::Internal(format!(
                "a pod that stays no longer fits: {e}"
            )))
        })?;
        placed[i] = Some((server, p.gpus, p.cores));
    }
    let eligibility = Eligibility::new(&small, workload);
    let mut shrink = Shrink {
        removed: removed.clone(),
        ..Shrink::default()
    };
    for (i, p) in pods.iter().enumerate() {
        if placed[i].is_some() || node_bound(p) {
            continue;
        }
        match best_fit(&small, workload, &state, &eligibility, p) {
            Some((server, gpus, cores)) => {
                let moved = Pod {
                    server,
                    gpus,
                    cores,
                    ..(*p).clone()
                };
                state.add(&small, moved).map_err(|e| {
                    CapacityError::Plan(PlanningError::Internal(format!(
                        "a re-placed pod does not fit where it was placed: {e}"
                    )))
                })?;
                placed[i] = Some((server, gpus, cores));
                shrink.replaced.push(p.name.clone());
            }
            None => shrink.displaced.push(p.name.clone()),
        }
    }
    let ids = |set: Vec<u32>| IdsOrCount::Ids(set.into_iter().map(i64::from).collect());
    let mut out = workload.clone();
    out.running = workload
        .running
        .iter()
        .zip(&placed)
        .filter_map(|(entry, at)| {
            let (server, gpus, cores) = (*at)?;
            Some(RunningPod {
                node: small.server(server).name.clone(),
                gpus: Some(ids(gpus.to_vec())),
                cores: Some(ids(cores.to_vec())),
                ..entry.clone()
            })
        })
        .collect();
    // The budgets cover the pods that stay: a displaced pod is no longer in the workload.
    let kept: std::collections::BTreeSet<&str> = out
        .running
        .iter()
        .filter_map(|r| r.name.as_deref())
        .collect();
    for budget in &mut out.disruption_budget {
        budget.pods.retain(|p| kept.contains(p.as_str()));
    }
    out.disruption_budget
        .retain(|b| !b.pods.is_empty() || !b.workloads.is_empty());
    Ok((cluster, out, shrink))
}

/// Where the default scheduler binds a pod again: the node allocator's placement on each
/// server the rules let it onto and whose node admits it, the best fit (fewest free GPUs,
/// then cores, left over; ties by name).
fn best_fit(
    cluster: &Cluster,
    workload: &PreemptionSpec,
    state: &ClusterState,
    eligibility: &Eligibility,
    pod: &Pod,
) -> Option<(ServerId, GpuSet, CoreSet)> {
    let req = match workload.workload.get(pod.workload) {
        Some(class) => cluster.request_of(class, pod.gpus.len(), pod.cores.len()),
        None => Request::plain(pod.gpus.len(), pod.cores.len()),
    };
    let aligned = workload.simulation.admission == Admission::Kubelet
        && workload
            .workload
            .get(pod.workload)
            .is_some_and(|c| c.topology_qos == TopologyQos::Guaranteed);
    (0..cluster.servers.len() as u32)
        .map(ServerId)
        .filter(|&s| eligibility.allows(pod.workload, s))
        .filter_map(|s| {
            let a = &state.servers()[s.index()];
            let t = cluster.type_of(s);
            let p = place(t, a.free_gpus(), a.free_cores(), req)?;
            if aligned && t.required_level(req).is_none_or(|r| p.level > r) {
                return None;
            }
            let left = (
                a.free_gpus().len() - req.gpus,
                a.free_cores().len() - req.cores,
                cluster.name_rank(s),
            );
            Some((left, s, p))
        })
        .min_by_key(|(left, _, _)| *left)
        .map(|(_, s, p)| (s, p.gpus, p.cores))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::cluster::ServerRulesSpec;

    fn specs() -> (ClusterSpec, PreemptionSpec) {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let cluster = toml::from_str(&read("tests/fixtures/valid/shrink-cluster.toml"));
        let workload = toml::from_str(&read("tests/fixtures/valid/capacity-shrink.toml"));
        match (cluster, workload) {
            (Ok(c), Ok(w)) => (c, w),
            (c, w) => panic!("the fixtures parse: {:?} {:?}", c.err(), w.err()),
        }
    }

    fn names(c: &ClusterSpec) -> Vec<String> {
        ClusterSpec::pool_server_names(&c.pool[0])
    }

    #[test]
    fn the_emptiest_servers_go_and_their_pods_are_re_placed_or_displaced() {
        let (cluster, workload) = specs();
        // n-3 holds nothing, n-1 one GPU, n-2 two, n-0 three.
        let (c, w, s) = shrink(&cluster, &workload, 0, 2).expect("shrinks");
        assert_eq!(s.removed, ["n-3", "n-1"]);
        assert_eq!(s.replaced, ["jobs/d"]);
        assert!(s.displaced.is_empty());
        assert_eq!(names(&c), ["n-0", "n-2"]);
        // d takes n-0's last free GPU (the best fit) and cores on that GPU's NUMA node.
        let d = w
            .running
            .iter()
            .find(|r| r.name.as_deref() == Some("jobs/d"));
        let d = d.expect("d still runs");
        assert_eq!(d.node, "n-0");
        assert_eq!(d.gpus, Some(IdsOrCount::Ids(vec![3])));
        assert_eq!(d.cores, Some(IdsOrCount::Ids(vec![12, 13])));
        // The shrunk specs give a valid state that holds every pod that stayed.
        let state = running_state(&Cluster::from_spec(&c), &w).expect("valid state");
        assert_eq!(state.pod_count(), 6);

        let (_, w, s) = shrink(&cluster, &workload, 0, 1).expect("shrinks");
        assert_eq!(s.removed, ["n-3", "n-1", "n-2"]);
        assert_eq!(s.replaced, ["jobs/d"]);
        assert_eq!(s.displaced, ["jobs/e", "jobs/f"]);
        assert_eq!(w.running.len(), 4);
        assert!(w.running.iter().all(|r| r.node == "n-0"));
        // At or above the spec's count nothing is shrunk and the workload is the spec's.
        let (c, w, s) = shape(&cluster, &workload, 0, 6).expect("grows");
        assert_eq!(names(&c).len(), 6);
        assert!(w.is_none() && s == Shrink::default());
    }

    #[test]
    fn ties_go_by_name_and_node_critical_pods_leave_with_their_node() {
        let (mut cluster, mut workload) = specs();
        // A pool without running pods loses its last servers, as it always has.
        workload.running.clear();
        let (c, _, s) = shrink(&cluster, &workload, 0, 2).expect("shrinks");
        assert_eq!(s.removed, ["n-3", "n-2"]);
        assert_eq!(names(&c), ["n-0", "n-1"]);
        // Node-critical pods (a node's daemons, the kubelet's reserved cores) neither count
        // towards a server's load nor move; the rules of a removed server go with it.
        let (_, mut critical) = specs();
        critical.workload[0].priority = NODE_CRITICAL_PRIORITY;
        cluster.server.push(ServerRulesSpec {
            name: "n-2".into(),
            labels: [("zone".to_string(), "b".to_string())].into(),
            taints: Vec::new(),
            unschedulable: false,
            ready: true,
            domain: Default::default(),
        });
        let (c, w, s) = shrink(&cluster, &critical, 0, 1).expect("shrinks");
        assert_eq!(s.removed, ["n-3", "n-2", "n-1"]);
        assert!(s.replaced.is_empty() && s.displaced.is_empty());
        assert_eq!(w.running.len(), 3);
        assert!(c.server.is_empty());
    }
}
