//! The parts of the Dynamic Resource Allocation objects coplan reads (`resource.k8s.io` v1,
//! v1beta2 and v1beta1): ResourceSlice, DeviceClass, ResourceClaim and ResourceClaimTemplate,
//! as typed structs deserialised from one object's tree. Where the API versions differ
//! (v1beta1 nests a device's attributes under `basic` and a request's class beside its name;
//! v1 and v1beta2 put them under `exactly`), both spellings are read and [`DeviceRequest`]
//! and [`Device`] answer one way.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The DRA kinds, by `kind`.
pub const DRA_KINDS: [&str; 4] = [
    "ResourceSlice",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
];

/// One DRA object: its metadata, and the spec and status of whichever kind it is.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DraObject {
    /// `kind`.
    pub kind: Option<String>,
    /// `apiVersion`, e.g. `resource.k8s.io/v1`.
    pub api_version: Option<String>,
    /// `metadata`.
    pub metadata: DraMetadata,
    /// `spec`, the union of the four kinds' specs (their field names do not collide).
    pub spec: DraSpec,
    /// ResourceClaim `status`.
    pub status: ClaimStatus,
}

/// What coplan reads of a DRA object's `metadata`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DraMetadata {
    /// Object name.
    pub name: Option<String>,
    /// Namespace (claims and templates).
    pub namespace: Option<String>,
}

/// The `spec` of a DRA object. ResourceSlice: `driver`, `nodeName`, `pool`, `devices` (a
/// list), `sharedCounters`; DeviceClass: `selectors`, `extendedResourceName`;
/// ResourceClaim: `devices` (a map: requests and constraints); ResourceClaimTemplate: `spec`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DraSpec {
    /// ResourceSlice: the driver publishing the devices.
    pub driver: Option<String>,
    /// ResourceSlice: the node the devices are on.
    pub node_name: Option<String>,
    /// ResourceSlice: devices reachable from every node (network-attached; not modelled).
    pub all_nodes: Option<bool>,
    /// ResourceSlice: devices reachable from the nodes a selector picks (not modelled).
    pub node_selector: Option<serde::de::IgnoredAny>,
    /// ResourceSlice: the pool the slice is part of.
    pub pool: SlicePool,
    /// ResourceSlice: counters its devices draw on (partitionable devices; not modelled).
    pub shared_counters: Vec<serde::de::IgnoredAny>,
    /// ResourceSlice: a list of devices; ResourceClaim: a map of requests and constraints.
    pub devices: Option<DevicesField>,
    /// DeviceClass: the CEL selectors a device must pass.
    pub selectors: Vec<Selector>,
    /// DeviceClass: the extended resource its devices are also requested by.
    pub extended_resource_name: Option<String>,
    /// ResourceClaimTemplate: the claim it stamps out.
    pub spec: Option<Box<ClaimSpec>>,
}

/// `spec.devices`: a slice's device list or a claim's requests. Told apart by shape (a list
/// or a map), so an error inside either is reported where it is.
#[derive(Debug)]
pub enum DevicesField {
    /// A ResourceSlice's devices.
    Slice(Vec<Device>),
    /// A ResourceClaim's requests and constraints.
    Claim(DeviceClaim),
}

impl<'de> Deserialize<'de> for DevicesField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = DevicesField;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a ResourceSlice's list of devices or a ResourceClaim's requests")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<Self::Value, A::Error> {
                Vec::<Device>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(DevicesField::Slice)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                DeviceClaim::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(DevicesField::Claim)
            }
        }
        d.deserialize_any(V)
    }
}

/// A ResourceClaimTemplate's `spec.spec`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClaimSpec {
    /// The claim's requests and constraints.
    pub devices: DeviceClaim,
}

/// `spec.pool` of a ResourceSlice.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SlicePool {
    /// Pool name (unique per driver).
    pub name: Option<String>,
    /// Generation: slices of an older generation are stale.
    pub generation: Option<i64>,
    /// How many slices the pool has.
    pub resource_slice_count: Option<i64>,
}

/// One device of a ResourceSlice.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Device {
    /// Device name, unique in its pool.
    pub name: String,
    /// Attributes (v1, v1beta2).
    pub attributes: BTreeMap<String, Attribute>,
    /// Capacities (v1, v1beta2).
    pub capacity: BTreeMap<String, Capacity>,
    /// v1beta1: attributes and capacities under `basic`.
    pub basic: Option<BasicDevice>,
    /// Counters consumed from the slice's shared counters (not modelled).
    pub consumes_counters: Vec<serde::de::IgnoredAny>,
    /// Device taints (not modelled).
    pub taints: Vec<serde::de::IgnoredAny>,
}

/// v1beta1's `basic` device.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BasicDevice {
    /// Attributes.
    pub attributes: BTreeMap<String, Attribute>,
    /// Capacities.
    pub capacity: BTreeMap<String, Capacity>,
    /// Counters consumed (not modelled).
    pub consumes_counters: Vec<serde::de::IgnoredAny>,
    /// Device taints (not modelled).
    pub taints: Vec<serde::de::IgnoredAny>,
}

/// A device attribute: exactly one of its typed values.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Attribute {
    /// An integer.
    pub int: Option<i64>,
    /// A string.
    pub string: Option<String>,
    /// A boolean.
    pub bool: Option<bool>,
    /// A semantic version.
    pub version: Option<String>,
}

impl Attribute {
    /// The value as text, whatever its type.
    pub fn text(&self) -> Option<String> {
        self.string
            .clone()
            .or_else(|| self.int.map(|i| i.to_string()))
            .or_else(|| self.bool.map(|b| b.to_string()))
            .or_else(|| self.version.clone())
    }
}

/// A device capacity: `{value: 80Gi}` (v1beta1 on), or a bare quantity (v1alpha3). Read
/// as any value (a quantity may be written as a bare number, which a text-only reader would
/// refuse once an untagged field has buffered it).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(transparent)]
pub struct Capacity(pub serde_json::Value);

impl Capacity {
    /// The quantity as written.
    pub fn text(&self) -> Option<String> {
        match &self.0 {
            serde_json::Value::Object(m) => m.get("value").and_then(quantity_text),
            other => quantity_text(other),
        }
    }
}

/// A quantity's text from a value that is a string or a number.
pub fn quantity_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl Device {
    /// Its attributes, wherever the API version put them.
    pub fn attributes(&self) -> &BTreeMap<String, Attribute> {
        match &self.basic {
            Some(b) if self.attributes.is_empty() => &b.attributes,
            _ => &self.attributes,
        }
    }

    /// Its capacities, wherever the API version put them.
    pub fn capacity(&self) -> &BTreeMap<String, Capacity> {
        match &self.basic {
            Some(b) if self.capacity.is_empty() => &b.capacity,
            _ => &self.capacity,
        }
    }

    /// Whether it draws on shared counters.
    pub fn consumes_counters(&self) -> bool {
        !self.consumes_counters.is_empty()
            || self
                .basic
                .as_ref()
                .is_some_and(|b| !b.consumes_counters.is_empty())
    }

    /// Whether it carries taints.
    pub fn tainted(&self) -> bool {
        !self.taints.is_empty() || self.basic.as_ref().is_some_and(|b| !b.taints.is_empty())
    }

    /// The attribute `name`, looked up qualified by `driver` when written without a domain
    /// (`productName` is `gpu.nvidia.com/productName` of the NVIDIA driver).
    pub fn attribute(&self, driver: &str, name: &str) -> Option<&Attribute> {
        let attrs = self.attributes();
        attrs.get(name).or_else(|| {
            match name.split_once('/') {
                // `driver/x` is written `x`.
                Some((domain, short)) if domain == driver => attrs.get(short),
                // `x` may be written `driver/x`.
                None => attrs.get(&format!("{driver}/{name}")),
                _ => None,
            }
        })
    }
}

/// A DeviceClass selector.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Selector {
    /// A CEL expression.
    pub cel: Option<CelSelector>,
}

/// A CEL selector.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct CelSelector {
    /// The expression.
    pub expression: String,
}

/// A claim's `spec.devices`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DeviceClaim {
    /// What it asks for.
    pub requests: Vec<DeviceRequest>,
    /// Constraints across its requests.
    pub constraints: Vec<Constraint>,
    /// Driver configuration (not modelled).
    pub config: Vec<serde::de::IgnoredAny>,
}

/// One request of a claim: v1/v1beta2 `exactly` or `firstAvailable`, v1beta1 flat.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DeviceRequest {
    /// The request's name, as constraints and allocation results name it.
    pub name: String,
    /// v1, v1beta2: the one way to satisfy it.
    pub exactly: Option<ExactRequest>,
    /// v1, v1beta2 (and v1beta1): alternatives, the first that can be met taken.
    pub first_available: Vec<ExactRequest>,
    /// v1beta1: the class.
    pub device_class_name: Option<String>,
    /// v1beta1: how many.
    pub count: Option<i64>,
    /// v1beta1: `ExactCount` or `All`.
    pub allocation_mode: Option<String>,
    /// v1beta1: CEL selectors.
    pub selectors: Vec<serde::de::IgnoredAny>,
    /// v1beta1: admin access.
    pub admin_access: Option<bool>,
}

/// What one way of meeting a request asks.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExactRequest {
    /// Name of a `firstAvailable` sub-request.
    pub name: Option<String>,
    /// The device class.
    pub device_class_name: Option<String>,
    /// How many devices (`ExactCount`; default 1).
    pub count: Option<i64>,
    /// `ExactCount` (default) or `All`.
    pub allocation_mode: Option<String>,
    /// CEL selectors (not modelled).
    pub selectors: Vec<serde::de::IgnoredAny>,
    /// Admin access: the devices are monitored, not held.
    pub admin_access: Option<bool>,
    /// Consumable capacity asked of one device (the CPU driver's `dra.cpu/cpu`).
    pub capacity: Option<CapacityRequests>,
}

/// `capacity.requests` of a request.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct CapacityRequests {
    /// By capacity name.
    pub requests: BTreeMap<String, Capacity>,
}

impl DeviceRequest {
    /// The way the request is met, as coplan reads it: `exactly`, the v1beta1 fields, or the
    /// first of `firstAvailable` (with whether alternatives were passed over).
    pub fn resolved(&self) -> (ExactRequest, bool) {
        if let Some(e) = &self.exactly {
            return (e.clone(), false);
        }
        if let Some(first) = self.first_available.first() {
            return (first.clone(), self.first_available.len() > 1);
        }
        (
            ExactRequest {
                name: None,
                device_class_name: self.device_class_name.clone(),
                count: self.count,
                allocation_mode: self.allocation_mode.clone(),
                selectors: Vec::new(),
                admin_access: self.admin_access,
                capacity: None,
            },
            false,
        )
    }

    /// Whether it carries CEL selectors of its own, in any spelling.
    pub fn has_selectors(&self) -> bool {
        !self.selectors.is_empty()
            || self
                .exactly
                .as_ref()
                .is_some_and(|e| !e.selectors.is_empty())
            || self.first_available.iter().any(|e| !e.selectors.is_empty())
    }
}

/// A constraint across some of a claim's requests.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Constraint {
    /// The requests it binds (empty: all).
    pub requests: Vec<String>,
    /// The attribute whose value every device must share.
    pub match_attribute: Option<String>,
    /// Distinct attribute values (not modelled).
    pub distinct_attribute: Option<String>,
}

/// A ResourceClaim's `status`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClaimStatus {
    /// The allocation, once made.
    pub allocation: Option<Allocation>,
    /// The pods (or other consumers) it is reserved for.
    pub reserved_for: Vec<Consumer>,
}

/// `status.allocation`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Allocation {
    /// The devices allocated.
    pub devices: AllocatedDevices,
}

/// `status.allocation.devices`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct AllocatedDevices {
    /// One result per allocated device.
    pub results: Vec<AllocationResult>,
}

/// One allocated device.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AllocationResult {
    /// The request (or `request/sub-request`) it meets.
    pub request: String,
    /// The driver.
    pub driver: String,
    /// The pool.
    pub pool: String,
    /// The device, by name in its pool.
    pub device: String,
    /// Allocated for admin access: held by nobody.
    pub admin_access: Option<bool>,
    /// Capacity consumed of a shareable device (the CPU driver's cores).
    pub consumed_capacity: BTreeMap<String, Capacity>,
}

/// A consumer a claim is reserved for.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Consumer {
    /// `pods` for a pod.
    pub resource: String,
    /// Its name (in the claim's namespace).
    pub name: String,
}

/// A pod's `spec.resourceClaims` entry.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodResourceClaim {
    /// The name containers refer to it by.
    pub name: String,
    /// An existing claim.
    pub resource_claim_name: Option<String>,
    /// A template the pod's own claim is stamped from.
    pub resource_claim_template_name: Option<String>,
}

/// A pod's `status.resourceClaimStatuses` entry: the claim generated for a template.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodResourceClaimStatus {
    /// The pod's claim entry.
    pub name: String,
    /// The generated claim.
    pub resource_claim_name: Option<String>,
}
