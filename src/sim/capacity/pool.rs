//! Which pool a search resizes and the cluster spec at each size: the only place that edits
//! a spec, so that server names stay stable and `[[running]]` pods find their nodes.

use super::error::CapacityError;
use crate::spec::{ClusterSpec, PreemptionSpec, validate};

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

/// The cluster with pool `index` at `size` servers. The servers keep the spec's names (an
/// index's zero-padding depends on the count) and added ones continue the numbering, so
/// `[[running]]` pods find their nodes at every size.
pub fn resize(spec: &ClusterSpec, index: usize, size: u32) -> Result<ClusterSpec, CapacityError> {
    let mut out = spec.clone();
    let pool = &mut out.pool[index];
    let mut names = ClusterSpec::pool_server_names(pool);
    let mut next = names.len();
    while names.len() < size as usize {
        let name = format!("{}{next}", pool.name_prefix);
        next += 1;
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.truncate(size as usize);
    pool.count = i64::from(size);
    pool.names = Some(names);
    if let Some(finding) = validate::cluster(&out).first() {
        return Err(CapacityError::Resize {
            prefix: spec.pool[index].name_prefix.clone(),
            size,
            reason: format!("{} ({})", finding.message, finding.path),
        });
    }
    Ok(out)
}

/// The fewest servers pool `index` needs to keep every `[[running]]` pod's node.
pub(super) fn running_minimum(spec: &ClusterSpec, index: usize, workload: &PreemptionSpec) -> u32 {
    let names = ClusterSpec::pool_server_names(&spec.pool[index]);
    workload
        .running
        .iter()
        .filter_map(|r| names.iter().position(|n| *n == r.node))
        .map(|i| i as u32 + 1)
        .max()
        .unwrap_or(1)
        .max(1)
}
