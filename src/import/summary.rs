//! What an import read and what it did with it: counts of what was read, mapped, defaulted,
//! rounded and dropped, the fields it ignored, and warnings. Printed on stderr (or as JSON).

use std::collections::BTreeMap;

use serde::Serialize;

/// The account of one import.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportSummary {
    /// `k8s`, `alibaba-openb` or `azure-llm`.
    pub source: String,
    /// The files read.
    pub files: Vec<String>,
    /// What affects scheduling and was honoured: rules, policies, sidecars, overheads.
    pub honoured: BTreeMap<String, u64>,
    /// What affects scheduling and is not modelled, with the pods (or nodes) concerned.
    pub not_modelled: BTreeMap<String, Vec<String>>,
    /// What was read: documents, objects by kind, rows.
    pub read: BTreeMap<String, u64>,
    /// What became part of the specs: server types, servers, running pods, preemptors, classes.
    pub mapped: BTreeMap<String, u64>,
    /// Values coplan chose because the input did not give them.
    pub defaulted: BTreeMap<String, u64>,
    /// Values rounded to what coplan models (fractional CPUs, GPU shares).
    pub rounded: BTreeMap<String, u64>,
    /// What was read but left out of the specs, by reason.
    pub dropped: BTreeMap<String, u64>,
    /// Fields of the input that coplan does not model, by kind and path, with how often each
    /// occurred.
    pub ignored_fields: BTreeMap<String, u64>,
    /// Names behind some counts (e.g. the nodes that got the default layout).
    pub lists: BTreeMap<String, Vec<String>>,
    /// Warnings, in the order they arose.
    pub warnings: Vec<String>,
}

fn bump(map: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    if n > 0 {
        *map.entry(key.to_string()).or_default() += n;
    }
}

impl ImportSummary {
    /// An empty account of an import of `files` by the importer `source`.
    pub fn new(source: &str, files: Vec<String>) -> Self {
        Self {
            source: source.to_string(),
            files,
            ..Self::default()
        }
    }

    /// Counts `n` more of `key` that affects scheduling and was honoured.
    pub fn honoured(&mut self, key: &str, n: u64) {
        bump(&mut self.honoured, key, n);
    }

    /// Records that `who` (a pod or node) uses `what`, which affects scheduling and coplan
    /// does not model.
    pub fn not_modelled(&mut self, what: &str, who: String) {
        self.not_modelled
            .entry(what.to_string())
            .or_default()
            .push(who);
    }

    /// Counts `n` more of `key` read (zero counts are not recorded).
    pub fn read(&mut self, key: &str, n: u64) {
        bump(&mut self.read, key, n);
    }

    /// Counts `n` more of `key` mapped into the specs.
    pub fn mapped(&mut self, key: &str, n: u64) {
        bump(&mut self.mapped, key, n);
    }

    /// Counts `n` more values of `key` that coplan chose.
    pub fn defaulted(&mut self, key: &str, n: u64) {
        bump(&mut self.defaulted, key, n);
    }

    /// Counts `n` more values of `key` rounded.
    pub fn rounded(&mut self, key: &str, n: u64) {
        bump(&mut self.rounded, key, n);
    }

    /// Counts `n` more of `key` left out.
    pub fn dropped(&mut self, key: &str, n: u64) {
        bump(&mut self.dropped, key, n);
    }

    /// Counts `n` more occurrences of the unmodelled field `key`.
    pub fn ignored(&mut self, key: &str, n: u64) {
        bump(&mut self.ignored_fields, key, n);
    }

    /// Adds a name to the list `key`.
    pub fn list(&mut self, key: &str, item: String) {
        self.lists.entry(key.to_string()).or_default().push(item);
    }

    /// Records a warning.
    pub fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }
}
