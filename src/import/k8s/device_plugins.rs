//! Devices as device plugins advertise them in `status.allocatable`: `nvidia.com/gpu`
//! (whole GPUs, or MIG slices under the single strategy), `amd.com/gpu`, the MIG profiles of
//! the mixed strategy, and the resources `--gpu-resource` names; and the kind a pod's
//! extended resource asks for.

use std::collections::BTreeMap;

use super::conventions::{GPU_PRODUCT_LABEL, GPU_RESOURCE};
use super::devices::DeviceFacts;
use crate::import::k8s_objects::Labels;
use crate::import::summary::ImportSummary;
use crate::spec::cluster::DEFAULT_GPU_KIND;
use crate::spec::limits::MAX_GPUS_PER_SERVER;

/// The AMD resource of whole GPUs.
pub const AMD_GPU_RESOURCE: &str = "amd.com/gpu";
/// The prefix of the MIG resources of the mixed strategy.
pub const MIG_RESOURCE_PREFIX: &str = "nvidia.com/mig-";
/// GPU feature discovery's label of the MIG strategy (`single`, `mixed`).
pub const MIG_STRATEGY_LABEL: &str = "nvidia.com/mig.strategy";
/// GPU feature discovery's label of each GPU's memory, in MiB.
pub const GPU_MEMORY_LABEL: &str = "nvidia.com/gpu.memory";
/// AMD's node labeller: the product.
pub const AMD_PRODUCT_LABEL: &str = "amd.com/gpu.product-name";

/// The share of a whole GPU a MIG profile is: its compute slices (`3g` of `3g.40gb`, or of
/// `1c.3g.40gb`) over the GPU's seven (four on an A30).
pub(super) fn mig_fraction(profile: &str, product: Option<&str>) -> Option<f64> {
    let slices: u32 = profile
        .split('.')
        .find_map(|part| part.strip_suffix('g').and_then(|n| n.parse().ok()))?;
    let of = if product.is_some_and(|p| p.contains("A30")) {
        4
    } else {
        7
    };
    (slices > 0 && slices <= of).then(|| f64::from(slices) / f64::from(of))
}

/// The MIG profile a single-strategy product label names (`NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`).
fn single_strategy_profile(product: &str) -> Option<&str> {
    product
        .rsplit_once("-MIG-")
        .map(|(_, p)| p)
        .filter(|p| !p.is_empty())
}

/// The kind pods asking `nvidia.com/gpu` get on a node: its MIG profile under the single
/// strategy, else whole GPUs.
pub(super) fn nvidia_gpu_kind(labels: &Labels) -> String {
    let product = labels.get(GPU_PRODUCT_LABEL);
    let single = labels.get(MIG_STRATEGY_LABEL) == Some("single")
        || product.is_some_and(|p| single_strategy_profile(p).is_some());
    match product.and_then(single_strategy_profile) {
        Some(profile) if single => format!("{MIG_RESOURCE_PREFIX}{profile}"),
        _ => DEFAULT_GPU_KIND.to_string(),
    }
}

/// The device kind of an extended resource a pod asks for, on a node whose `nvidia.com/gpu`
/// is `nvidia_kind`; `None` for a resource that is no device.
pub(super) fn resource_kind(resource: &str, nvidia_kind: &str, extra: &[String]) -> Option<String> {
    if resource == GPU_RESOURCE {
        Some(nvidia_kind.to_string())
    } else if resource == AMD_GPU_RESOURCE
        || resource.starts_with(MIG_RESOURCE_PREFIX)
        || extra.iter().any(|r| r == resource)
    {
        Some(resource.to_string())
    } else {
        None
    }
}

/// The kinds of whole GPUs a node's plugins may advertise, in the order one is taken as the
/// node's whole GPUs when it has several: `gpu`, `amd.com/gpu`, then the `--gpu-resource`s.
pub(super) fn whole_kind_preference(extra: &[String]) -> Vec<String> {
    [DEFAULT_GPU_KIND, AMD_GPU_RESOURCE]
        .into_iter()
        .map(str::to_string)
        .chain(extra.iter().cloned())
        .collect()
}

/// Whether an extended resource is a device resource coplan models.
pub(super) fn is_device_resource(resource: &str, extra: &[String]) -> bool {
    resource_kind(resource, DEFAULT_GPU_KIND, extra).is_some()
}

/// The devices a node's device plugins advertise (`counts`: whole units per resource).
pub(super) fn plugin_devices(
    labels: &Labels,
    counts: &BTreeMap<String, u64>,
    summary: &mut ImportSummary,
    node: &str,
) -> Vec<DeviceFacts> {
    let product = labels.get(GPU_PRODUCT_LABEL);
    let memory = labels
        .get(GPU_MEMORY_LABEL)
        .and_then(|m| m.parse::<u64>().ok());
    let mut out = Vec::new();
    for (resource, &n) in counts {
        let kind = if resource == GPU_RESOURCE {
            nvidia_gpu_kind(labels)
        } else {
            resource.clone()
        };
        let fraction = match kind.strip_prefix(MIG_RESOURCE_PREFIX) {
            Some(profile) => match mig_fraction(profile, product) {
                Some(f) => f,
                None => {
                    summary.warn(format!(
                        "node `{node}`: MIG profile `{profile}` names no compute slices; each device counted as a whole GPU's share 1/7"
                    ));
                    1.0 / 7.0
                }
            },
            None => 1.0,
        };
        if resource == GPU_RESOURCE && kind != DEFAULT_GPU_KIND {
            summary.honoured("nodes_with_mig_single_strategy", 1);
        }
        if resource.starts_with(MIG_RESOURCE_PREFIX) {
            summary.honoured("nodes_with_mig_mixed_strategy_resources", 1);
        }
        let memory_mib = if fraction < 1.0 { None } else { memory };
        // A server holds at most `MAX_GPUS_PER_SERVER` devices: a count of 2³² − 1 is not
        // listed one by one (the node keeps the first ones; `nodes` reports the cut).
        let room = (MAX_GPUS_PER_SERVER as usize).saturating_sub(out.len()) as u64 + 1;
        for _ in 0..n.min(room) {
            out.push(DeviceFacts {
                kind: kind.clone(),
                numa: None,
                pcie_root: None,
                fraction,
                memory_mib,
                source: None,
                driver: "device-plugin".into(),
                product: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mig_profiles_are_shares_of_a_gpu() {
        assert_eq!(
            mig_fraction("3g.40gb", Some("NVIDIA-H100-80GB-HBM3")),
            Some(3.0 / 7.0)
        );
        assert_eq!(mig_fraction("1c.2g.20gb", None), Some(2.0 / 7.0));
        assert_eq!(mig_fraction("2g.12gb", Some("NVIDIA-A30")), Some(0.5));
        assert_eq!(mig_fraction("xl", None), None);
        assert_eq!(
            single_strategy_profile("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"),
            Some("1g.5gb")
        );
    }
}
