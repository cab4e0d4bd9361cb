//! The node list → server types and pools: a built-in template where `--server-type` maps the
//! node's GPU model to one, the default layout otherwise.

use std::collections::BTreeMap;

use super::options::AlibabaOptions;
use super::table::{NODE_COLUMNS, int_cell, read_table};
use crate::import::build::{ClusterBuilder, default_layout};
use crate::import::error::ImportError;
use crate::import::summary::ImportSummary;
use crate::spec::cluster::builtin_server_types;
use crate::spec::limits::MAX_SERVERS;

/// The cluster the node list describes, with each node's GPU model (by ledger index) and the
/// built-in templates it uses.
pub(super) struct NodeList {
    pub(super) builder: ClusterBuilder,
    pub(super) models: Vec<String>,
    pub(super) templates: Vec<String>,
}

/// Nodes → server types and pools: a model mapped by `--server-type` takes that built-in
/// template (its GPU count must match), any other model the default layout.
pub(super) fn read_nodes(
    (name, text): (&str, &str),
    options: &AlibabaOptions,
    summary: &mut ImportSummary,
) -> Result<NodeList, ImportError> {
    let builtins = builtin_server_types();
    for (model, type_name) in &options.server_types {
        if !builtins.iter().any(|t| &t.name == type_name) {
            return Err(ImportError::input(
                format!("--server-type {model}={type_name}: no built-in server type `{type_name}`"),
                Some(format!(
                    "built-in server types: {}",
                    builtins
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            ));
        }
    }
    let table = read_table(0, name, text, NODE_COLUMNS)?;
    let mut list = NodeList {
        builder: ClusterBuilder::default(),
        models: Vec::new(),
        templates: Vec::new(),
    };
    let mut defaulted_models: BTreeMap<String, u64> = BTreeMap::new();
    let mut seen = BTreeMap::new();
    let mut kept: i64 = 0;
    for (line, row) in &table.rows {
        let line = *line;
        let cell = |c: &str| table.cell(row, c).unwrap_or("");
        summary.read("nodes", 1);
        let sn = cell("sn").to_string();
        if sn.is_empty() {
            return Err(
                ImportError::at(0, line, None, "column `sn` is empty".into())
                    .with("this row", "every node needs a name"),
            );
        }
        if let Some(first) = seen.insert(sn.clone(), line) {
            return Err(ImportError::at(
                0,
                line,
                None,
                format!("node `{sn}` is listed twice (first on line {first})"),
            )
            .with("again here", "node names must be unique"));
        }
        let cpu_milli = int_cell(0, line, "cpu_milli", cell("cpu_milli"))?;
        int_cell(0, line, "memory_mib", cell("memory_mib"))?;
        let gpus = int_cell(0, line, "gpu", cell("gpu"))?;
        let model = cell("model").to_string();
        let cores = cpu_milli / 1000;
        if !cpu_milli.is_multiple_of(1000) {
            summary.rounded("node_cpu_to_whole_cores", 1);
        }
        if cores == 0 && gpus == 0 {
            summary.dropped("nodes_without_cpu_or_gpu", 1);
            continue;
        }
        if kept >= MAX_SERVERS {
            return Err(ImportError::at(
                0,
                line,
                None,
                format!(
                    "node `{sn}` is the {}th: a cluster holds at most {MAX_SERVERS} servers",
                    kept + 1
                ),
            )
            .with(
                "one node too many",
                "import a sample of the node list (docs/spec.md, \"Limits\")",
            ));
        }
        kept += 1;
        let template = options
            .server_types
            .get(&model)
            .and_then(|t| builtins.iter().find(|b| &b.name == t));
        match template {
            Some(template) => {
                if template.gpu_numa.len() as u64 != gpus {
                    return Err(ImportError::at(0, line, None, format!(
                        "--server-type {model}={}: node `{sn}` has {gpus} GPU(s), the template {}",
                        template.name,
                        template.gpu_numa.len()
                    )).with("this node", "map a model to a template with as many GPUs per server, or leave it to the default layout"));
                }
                let template_cores =
                    template.sockets * template.numa_per_socket * template.cores_per_numa;
                if template_cores as u64 != cores {
                    summary.rounded("nodes_given_the_template_core_count", 1);
                }
                list.builder.add_template_node(&sn, template);
                if !list.templates.contains(&template.name) {
                    list.templates.push(template.name.clone());
                }
                summary.mapped("nodes_with_a_template", 1);
            }
            None => {
                let hint = match (model.is_empty(), gpus) {
                    (false, _) => model.as_str(),
                    (true, 0) => "cpu",
                    (true, _) => "gpu",
                };
                let (layout, dropped) =
                    default_layout(cores, gpus, (!model.is_empty()).then_some(model.as_str()));
                if dropped > 0 {
                    summary.rounded("cores_dropped_by_the_default_layout", dropped);
                }
                list.builder.add_node(&sn, &layout, hint);
                summary.defaulted("nodes_with_the_default_layout", 1);
                *defaulted_models.entry(hint.to_string()).or_default() += 1;
            }
        }
        list.models.push(model);
    }
    for (model, n) in &defaulted_models {
        summary.warn(format!(
            "model {model}: no --server-type, so its {n} node(s) get the default layout (docs/import.md)"
        ));
        summary.list("models_with_the_default_layout", model.clone());
    }
    for model in options.server_types.keys() {
        if !list.models.contains(model) {
            summary.warn(format!(
                "--server-type {model}=…: no node has model {model}"
            ));
        }
    }
    if list.builder.node_count() == 0 {
        return Err(ImportError::input(format!("{name}: no nodes"), None));
    }
    Ok(list)
}
