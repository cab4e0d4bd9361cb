//! The DRA devices of a snapshot: DeviceClasses read as what their CEL selectors select,
//! ResourceSlices (the newest generation of each pool) read device by device into each
//! node's devices with their kinds, NUMA nodes and PCIe roots, and the CPU driver's devices
//! apart, as cores.

use std::collections::{BTreeMap, BTreeSet};

use super::device_plugins::mig_fraction;
use super::devices::{CpuDevice, DeviceFacts, DeviceRef};
use super::read::{DraObjects, Located};
use crate::import::dra_objects::{Device, DevicesField};
use crate::import::quantity;
use crate::import::summary::ImportSummary;

/// The standard DRA attribute of a device's NUMA node.
pub const NUMA_ATTRIBUTE: &str = "resource.kubernetes.io/numaNode";
/// The standard DRA attribute of a device's PCIe root.
pub const PCIE_ROOT_ATTRIBUTE: &str = "resource.kubernetes.io/pcieRoot";

/// What a DeviceClass selects, as read from its CEL selectors.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct ClassMatch {
    driver: Option<String>,
    /// (qualified attribute, value as text).
    attributes: Vec<(String, String)>,
}

impl ClassMatch {
    fn conditions(&self) -> usize {
        usize::from(self.driver.is_some()) + self.attributes.len()
    }

    fn selects(&self, driver: &str, device: &Device) -> bool {
        self.driver.as_deref().is_none_or(|d| d == driver)
            && self.attributes.iter().all(|(name, value)| {
                device
                    .attribute(driver, name)
                    .and_then(|a| a.text())
                    .is_some_and(|v| &v == value)
            })
    }
}

/// One CEL selector read as a conjunction of `device.driver == "…"` and
/// `device.attributes["domain"].name == value`; `None` for anything else.
pub(super) fn parse_cel(expression: &str) -> Option<ClassMatch> {
    let mut m = ClassMatch::default();
    for atom in expression.split("&&") {
        let atom = atom
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        let (lhs, rhs) = atom.split_once("==")?;
        let (lhs, rhs) = (lhs.trim(), rhs.trim());
        let value = unquote(rhs)?;
        if lhs == "device.driver" {
            m.driver = Some(value);
            continue;
        }
        let rest = lhs.strip_prefix("device.attributes[")?;
        let (domain, rest) = rest.split_once(']')?;
        let domain = unquote(domain.trim())?;
        let name = rest.strip_prefix('.')?.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        m.attributes.push((format!("{domain}/{name}"), value));
    }
    Some(m)
}

fn unquote(text: &str) -> Option<String> {
    let t = text.trim();
    if let Some(inner) = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| t.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
    {
        return (!inner.contains(['"', '\''])).then(|| inner.to_string());
    }
    // An integer or boolean literal compares as its text.
    (t == "true" || t == "false" || t.parse::<i64>().is_ok()).then(|| t.to_string())
}

/// The DRA devices of the snapshot, by node, with their kinds.
#[derive(Debug, Default)]
pub(super) struct DraInventory {
    /// Node → its devices (not CPUs).
    pub(super) devices: BTreeMap<String, Vec<DeviceFacts>>,
    /// Node → its CPU devices.
    pub(super) cpus: BTreeMap<String, Vec<CpuDevice>>,
    /// DeviceClass → the kind its devices have (its own name), or `None` when its selectors
    /// could not be read.
    pub(super) class_kinds: BTreeMap<String, Option<String>>,
    /// DeviceClasses that select CPU devices.
    pub(super) cpu_classes: BTreeSet<String>,
    /// Device → node, for allocation results.
    pub(super) node_of: BTreeMap<DeviceRef, String>,
    /// Device (not CPU) → its kind.
    pub(super) kind_of: BTreeMap<DeviceRef, String>,
    /// The CPU devices.
    pub(super) cpu_devices: BTreeSet<DeviceRef>,
    /// Per kind, the most devices of it any node has (`allocationMode: All`).
    pub(super) most_per_node: BTreeMap<String, u64>,
    /// Per kind, the fewest devices of it a node that has it has.
    pub(super) fewest_per_node: BTreeMap<String, u64>,
}

/// Whether a device is a CPU device: a capacity named `cpu` (`dra.cpu/cpu`), or a driver
/// named for CPUs.
fn cpu_capacity(driver: &str, device: &Device) -> Option<u64> {
    let cap = device
        .capacity()
        .iter()
        .find(|(k, _)| *k == "cpu" || k.ends_with("/cpu"))
        .and_then(|(_, v)| v.text())
        .and_then(|t| quantity::parse(&t).ok());
    match cap {
        Some(c) => Some(c.max(0.0).floor() as u64),
        None if driver == "dra.cpu" || driver.ends_with(".cpu") => Some(1),
        None => None,
    }
}

fn numa_of(driver: &str, device: &Device) -> Option<usize> {
    [NUMA_ATTRIBUTE, "numaNode", "numaNodeID"]
        .iter()
        .find_map(|a| device.attribute(driver, a).and_then(|v| v.int))
        .and_then(|n| usize::try_from(n).ok())
}

/// The readable DeviceClasses with what each selects.
type Matches = [(String, ClassMatch)];

impl DraInventory {
    /// Reads the slices and classes.
    pub(super) fn read(dra: &DraObjects, summary: &mut ImportSummary) -> Self {
        let mut inv = DraInventory::default();
        let matches = inv.read_classes(dra, summary);
        // Slices: the newest generation of each pool.
        let mut newest: BTreeMap<(String, String), i64> = BTreeMap::new();
        for s in &dra.slices {
            let key = slice_pool(s);
            let g = s.object.spec.pool.generation.unwrap_or(0);
            let e = newest.entry(key).or_insert(g);
            *e = (*e).max(g);
        }
        for s in &dra.slices {
            inv.read_slice(s, &newest, &matches, summary);
        }
        inv.count_per_node();
        inv
    }

    /// The classes: what each selects, or (a selector it cannot read) nothing it guesses.
    fn read_classes(
        &mut self,
        dra: &DraObjects,
        summary: &mut ImportSummary,
    ) -> Vec<(String, ClassMatch)> {
        let mut matches: Vec<(String, ClassMatch)> = Vec::new();
        for (name, class) in &dra.classes {
            summary.read("dra.device_classes", 1);
            let mut all = ClassMatch::default();
            let mut readable = true;
            for sel in &class.object.spec.selectors {
                match sel.cel.as_ref().and_then(|c| parse_cel(&c.expression)) {
                    Some(m) => {
                        all.driver = all.driver.or(m.driver);
                        all.attributes.extend(m.attributes);
                    }
                    None => readable = false,
                }
            }
            if class.object.spec.extended_resource_name.is_some() {
                summary.not_modelled(
                    "DeviceClass extendedResourceName (devices requested as an extended resource)",
                    name.clone(),
                );
            }
            if !readable {
                summary.warn(format!(
                    "DeviceClass `{name}`: a selector is not a conjunction of `device.driver == \"…\"` and `device.attributes[\"…\"].name == …`; the devices it selects are not guessed, and pending pods asking for it are left out"
                ));
                self.class_kinds.insert(name.clone(), None);
                continue;
            }
            self.class_kinds.insert(name.clone(), Some(name.clone()));
            matches.push((name.clone(), all));
        }
        matches
    }

    /// A slice's devices onto its node, unless a newer generation of its pool replaces it or
    /// it is not local to one node.
    fn read_slice(
        &mut self,
        s: &Located,
        newest: &BTreeMap<(String, String), i64>,
        matches: &Matches,
        summary: &mut ImportSummary,
    ) {
        summary.read("dra.resource_slices", 1);
        let spec = &s.object.spec;
        let (driver, pool) = slice_pool(s);
        if spec.pool.generation.unwrap_or(0) < newest[&(driver.clone(), pool.clone())] {
            summary.dropped("dra_resource_slices_of_an_older_pool_generation", 1);
            return;
        }
        let Some(node) = spec.node_name.clone() else {
            summary.not_modelled(
                "ResourceSlices not local to one node (allNodes, nodeSelector)",
                s.name.clone(),
            );
            return;
        };
        if !spec.shared_counters.is_empty() {
            summary.not_modelled(
                "DRA shared counters (partitionable devices)",
                s.name.clone(),
            );
        }
        let devices = match &spec.devices {
            Some(DevicesField::Slice(d)) => d.as_slice(),
            _ => &[],
        };
        for d in devices {
            let source = (driver.clone(), pool.clone(), d.name.clone());
            if d.tainted() {
                summary.not_modelled("DRA device taints", format!("{}/{}", s.name, d.name));
            }
            if d.consumes_counters() {
                summary.not_modelled(
                    "DRA devices consuming shared counters",
                    format!("{}/{}", s.name, d.name),
                );
            }
            self.node_of.insert(source.clone(), node.clone());
            if let Some(cores) = cpu_capacity(&driver, d) {
                summary.mapped(&format!("devices.cpu ({driver})"), 1);
                self.cpu_devices.insert(source.clone());
                self.cpus.entry(node.clone()).or_default().push(CpuDevice {
                    numa: numa_of(&driver, d),
                    cores,
                    source,
                });
                for (name, m) in matches {
                    if m.selects(&driver, d) {
                        self.cpu_classes.insert(name.clone());
                    }
                }
                continue;
            }
            let device = device_facts((s, d), &driver, source.clone(), matches, summary);
            self.kind_of.insert(source, device.kind.clone());
            self.devices.entry(node.clone()).or_default().push(device);
        }
    }

    /// Per kind, the most and the fewest devices of it a node that has it has.
    fn count_per_node(&mut self) {
        for devices in self.devices.values() {
            let mut per: BTreeMap<&str, u64> = BTreeMap::new();
            for d in devices {
                *per.entry(&d.kind).or_default() += 1;
            }
            for (k, n) in per {
                let most = self.most_per_node.entry(k.to_string()).or_insert(0);
                *most = (*most).max(n);
                let fewest = self.fewest_per_node.entry(k.to_string()).or_insert(n);
                *fewest = (*fewest).min(n);
            }
        }
    }
}

/// A device that is not a CPU: the most specific class that selects it names its kind
/// (without one, its driver does); a MIG profile makes it a share of a GPU.
fn device_facts(
    (s, d): (&Located, &Device),
    driver: &str,
    source: DeviceRef,
    matches: &Matches,
    summary: &mut ImportSummary,
) -> DeviceFacts {
    let mut selecting: Vec<&(String, ClassMatch)> = matches
        .iter()
        .filter(|(_, m)| m.selects(driver, d))
        .collect();
    selecting.sort_by_key(|(name, m)| (std::cmp::Reverse(m.conditions()), name.clone()));
    let kind = match selecting.first() {
        Some((name, _)) => name.clone(),
        None => {
            summary.list(
                "dra_devices_no_device_class_selects",
                format!("{}/{}", s.name, d.name),
            );
            driver.to_string()
        }
    };
    if selecting.len() > 1 {
        summary.list(
            "dra_devices_several_classes_select",
            format!("{}/{} → {kind}", s.name, d.name),
        );
    }
    let product = d.attribute(driver, "productName").and_then(|a| a.text());
    let mig_profile = d
        .attribute(driver, "profile")
        .and_then(|a| a.text())
        .filter(|_| {
            d.attribute(driver, "type")
                .and_then(|a| a.text())
                .as_deref()
                == Some("mig")
                || d.attribute(driver, "type").is_none()
        });
    let fraction = mig_profile
        .as_deref()
        .and_then(|p| mig_fraction(p, product.as_deref()))
        .unwrap_or(1.0);
    let memory_mib = d
        .capacity()
        .get("memory")
        .and_then(|c| c.text())
        .and_then(|t| quantity::parse(&t).ok())
        .map(|bytes| (bytes / (1024.0 * 1024.0)).round() as u64);
    summary.mapped(&format!("devices.{kind} ({driver})"), 1);
    DeviceFacts {
        kind,
        numa: numa_of(driver, d),
        pcie_root: d
            .attribute(driver, PCIE_ROOT_ATTRIBUTE)
            .and_then(|a| a.text()),
        fraction,
        memory_mib,
        source: Some(source),
        driver: driver.to_string(),
        product,
    }
}

fn slice_pool(s: &Located) -> (String, String) {
    let spec = &s.object.spec;
    (
        spec.driver.clone().unwrap_or_default(),
        spec.pool
            .name
            .clone()
            .or_else(|| spec.node_name.clone())
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cel_selectors_of_the_known_shapes_are_read_and_others_refused() {
        let m = parse_cel("device.driver == \"gpu.nvidia.com\" && device.attributes[\"gpu.nvidia.com\"].type == \"gpu\"").unwrap();
        assert_eq!(m.driver.as_deref(), Some("gpu.nvidia.com"));
        assert_eq!(
            m.attributes,
            vec![("gpu.nvidia.com/type".into(), "gpu".into())]
        );
        assert_eq!(
            parse_cel("device.driver == 'dra.cpu'")
                .unwrap()
                .driver
                .as_deref(),
            Some("dra.cpu")
        );
        for bad in [
            "device.driver in [\"a\", \"b\"]",
            "device.capacity[\"x\"].memory.compareTo(quantity(\"1Gi\")) >= 0",
            "device.driver == \"a\" || device.driver == \"b\"",
            "device.attributes[\"d\"].x != \"y\"",
        ] {
            assert_eq!(parse_cel(bad), None, "{bad}");
        }
    }
}
