//! `coplan import alibaba-openb`: the Alibaba GPU cluster trace 2023 ("openb", Weng et al.,
//! FGD, USENIX ATC 2023) → a cluster spec and a preemption workload. Nodes become pools of
//! server types; the pods alive at a moment are placed by a best-fit scheduler and the node
//! allocator; the next pods to arrive are the preemptors. Rules: `docs/import.md`.

use std::collections::BTreeMap;

use super::build::{
    ClassRegistry, ClusterBuilder, Ledger, QosMapping, default_layout, preemption_workload, slug,
};
use super::error::ImportError;
use super::k8s::Imported;
use super::summary::ImportSummary;
use crate::spec::cluster::builtin_server_types;
use crate::spec::limits::MAX_SERVERS;
use crate::spec::preemption::TopologyQos;

/// The moment whose running pods form the initial state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum At {
    /// A time in the trace's seconds.
    Time(f64),
    /// The moment the most whole GPUs are held (the earliest such moment).
    Peak,
}

/// What a GPU share (`gpu_milli < 1000`) becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GpuShares {
    /// One whole GPU (coplan allocates whole GPUs).
    #[default]
    Whole,
    /// Left out.
    Drop,
}

/// Options of the Alibaba importer.
#[derive(Debug, Clone)]
pub struct AlibabaOptions {
    /// Default: the peak.
    pub at: Option<At>,
    /// Preemptors: the pods created after the moment (or after the fill), in arrival order.
    pub next: usize,
    /// Share of GPUs the sampled lists fill to.
    pub fill: f64,
    /// GPU model → built-in server type.
    pub server_types: BTreeMap<String, String>,
    /// QoS class → mapping, over the default table.
    pub qos: BTreeMap<String, QosMapping>,
    /// What a fractional GPU request (`gpu_milli < 1000`) becomes.
    pub gpu_shares: GpuShares,
    /// QoS classes of the fill pods and of the preemptors of a sampled list (no `qos` column).
    pub sampled_qos: (String, String),
    /// Read a timed list as an arrival sequence too (FGD's protocol): fill, then the next pods.
    pub as_sequence: bool,
}

impl Default for AlibabaOptions {
    fn default() -> Self {
        Self {
            at: None,
            next: 200,
            fill: 0.9,
            server_types: BTreeMap::new(),
            qos: BTreeMap::new(),
            gpu_shares: GpuShares::Whole,
            sampled_qos: ("BE".into(), "LS".into()),
            as_sequence: false,
        }
    }
}

/// The default QoS table (DESIGN §11.1): LS and Guaranteed high and guaranteed, Burstable
/// middle and best-effort, BE low, preemptible and without topology needs.
pub fn default_qos_table() -> BTreeMap<String, QosMapping> {
    let m = |priority, topology_qos, preemptible| QosMapping {
        priority,
        topology_qos,
        preemptible,
    };
    BTreeMap::from([
        ("LS".into(), m(1000, TopologyQos::Guaranteed, false)),
        ("Guaranteed".into(), m(1000, TopologyQos::Guaranteed, false)),
        ("Burstable".into(), m(500, TopologyQos::BestEffort, false)),
        ("BE".into(), m(100, TopologyQos::None, true)),
    ])
}

/// One pod row.
#[derive(Debug, Clone)]
struct PodRow {
    name: String,
    cpu_milli: u64,
    num_gpu: u64,
    gpu_milli: u64,
    gpu_spec: Vec<String>,
    qos: Option<String>,
    creation: Option<f64>,
    deletion: Option<f64>,
    scheduled: Option<f64>,
}

/// A CSV file's header (column → index) and rows with their line numbers.
struct Table {
    columns: BTreeMap<String, usize>,
    rows: Vec<(usize, Vec<String>)>,
}

fn read_table(
    file: usize,
    name: &str,
    text: &str,
    required: &[&str],
) -> Result<Table, ImportError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| {
        ImportError::at(
            file,
            1,
            None,
            format!("{name}: the header does not read: {e}"),
        )
    })?;
    let columns: BTreeMap<String, usize> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| (h.to_string(), i))
        .collect();
    for r in required {
        if !columns.contains_key(*r) {
            return Err(
                ImportError::at(file, 1, None, format!("{name}: no column `{r}`")).with(
                    "header",
                    format!("expected the columns {}", required.join(",")),
                ),
            );
        }
    }
    let width = columns.len();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(1, |p| p.line() as usize);
            ImportError::at(file, line, None, format!("{name}: {e}")).with(
                "this row",
                format!("expected {width} columns like the header"),
            )
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        rows.push((line, record.iter().map(str::to_string).collect()));
    }
    Ok(Table { columns, rows })
}

impl Table {
    fn cell<'a>(&self, row: &'a [String], column: &str) -> Option<&'a str> {
        self.columns
            .get(column)
            .and_then(|&i| row.get(i))
            .map(String::as_str)
    }
}

/// An integer cell, or the located error naming its column.
fn int_cell(file: usize, line: usize, column: &str, text: &str) -> Result<u64, ImportError> {
    text.parse::<u64>().map_err(|_| {
        ImportError::at(
            file,
            line,
            None,
            format!("column `{column}` is `{text}`, not a non-negative integer"),
        )
        .with(
            "this row",
            "node and pod lists hold whole numbers (milli-CPUs, MiB, GPUs)",
        )
    })
}

/// A time cell: empty = absent.
fn time_cell(
    file: usize,
    line: usize,
    column: &str,
    text: &str,
) -> Result<Option<f64>, ImportError> {
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        _ => Err(ImportError::at(
            file,
            line,
            None,
            format!("column `{column}` is `{text}`, not a time in seconds"),
        )
        .with(
            "this row",
            "times are seconds from the trace's start, or empty",
        )),
    }
}

const NODE_COLUMNS: &[&str] = &["sn", "cpu_milli", "memory_mib", "gpu", "model"];
const POD_COLUMNS: &[&str] = &["name", "cpu_milli", "num_gpu", "gpu_milli"];
const TIME_COLUMNS: &[&str] = &["creation_time", "deletion_time", "scheduled_time"];

fn read_pods(file: usize, name: &str, text: &str) -> Result<(Vec<PodRow>, bool), ImportError> {
    let table = read_table(file, name, text, POD_COLUMNS)?;
    let timed = TIME_COLUMNS.iter().all(|c| table.columns.contains_key(*c));
    let has_qos = table.columns.contains_key("qos");
    if has_qos != timed {
        return Err(ImportError::at(file, 1, None, format!(
            "{name}: a pod list has either all of qos, creation_time, deletion_time, scheduled_time or none of them"
        )).with("header", "expected the full list (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time) or the sampled one (name,cpu_milli,memory_mib,num_gpu,gpu_milli)"));
    }
    let mut pods = Vec::new();
    for (line, row) in &table.rows {
        let line = *line;
        let cell = |c: &str| table.cell(row, c).unwrap_or("");
        let gpu_milli = int_cell(file, line, "gpu_milli", cell("gpu_milli"))?;
        let qos = has_qos.then(|| cell("qos").to_string());
        pods.push(PodRow {
            name: cell("name").to_string(),
            cpu_milli: int_cell(file, line, "cpu_milli", cell("cpu_milli"))?,
            num_gpu: int_cell(file, line, "num_gpu", cell("num_gpu"))?,
            gpu_milli,
            gpu_spec: cell("gpu_spec")
                .split('|')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            qos,
            creation: time_cell(file, line, "creation_time", cell("creation_time"))?,
            deletion: time_cell(file, line, "deletion_time", cell("deletion_time"))?,
            scheduled: time_cell(file, line, "scheduled_time", cell("scheduled_time"))?,
        });
    }
    Ok((pods, timed))
}

/// Whole GPUs a pod takes (a share takes one), or `None` when shares are dropped.
fn whole_gpus(pod: &PodRow, shares: GpuShares) -> Option<u64> {
    let share = pod.num_gpu >= 1 && pod.gpu_milli < 1000;
    match (share, shares) {
        (true, GpuShares::Drop) => None,
        _ => Some(pod.num_gpu),
    }
}

/// The earliest moment at which the scheduled pods hold the most whole GPUs.
fn peak_moment(pods: &[PodRow], shares: GpuShares) -> f64 {
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

/// The cluster the node list describes, with each node's GPU model (by ledger index) and the
/// built-in templates it uses.
struct NodeList {
    builder: ClusterBuilder,
    models: Vec<String>,
    templates: Vec<String>,
}

/// Nodes → server types and pools: a model mapped by `--server-type` takes that built-in
/// template (its GPU count must match), any other model the default layout.
fn read_nodes(
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

/// A pod's workload class and its (GPUs, cores).
type ClassAndShape = (String, (u32, u32));

/// Pods → workload classes, running pods and preemptors: the QoS table, GPU shares and CPU
/// rounding, the best-fit scheduler with `gpu_spec`, and the summary's counts of each.
struct PodMapper<'a> {
    options: &'a AlibabaOptions,
    qos_table: BTreeMap<String, QosMapping>,
    models: &'a [String],
    classes: ClassRegistry,
    ledger: Ledger,
    not_fitting: Vec<String>,
    preemptors: Vec<String>,
    constrained_preemptors: u64,
}

impl PodMapper<'_> {
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
    fn run(
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
    fn preempt(
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
    let mut qos_table = default_qos_table();
    qos_table.extend(options.qos.clone());
    let mut mapper = PodMapper {
        options,
        qos_table,
        models: &node_list.models,
        classes: ClassRegistry::default(),
        ledger: Ledger::new(&node_list.builder),
        not_fitting: Vec::new(),
        preemptors: Vec::new(),
        constrained_preemptors: 0,
    };
    // Arrival order: creation time (ties in file order) for a timed list, file order for a
    // sampled one.
    let mut order: Vec<usize> = (0..rows.len()).collect();
    if timed {
        order.sort_by(|&a, &b| {
            let created = |i: usize| rows[i].creation.unwrap_or(f64::INFINITY);
            created(a).total_cmp(&created(b)).then(a.cmp(&b))
        });
    }
    // A sampled list has no QoS column: its fill pods and preemptors take `--sampled-qos`.
    let (fill_qos, next_qos) = &options.sampled_qos;
    let qos_of = |pod: &PodRow, default: &str| pod.qos.clone().unwrap_or(default.to_string());
    let at = if timed && !options.as_sequence {
        let moment = match options.at.unwrap_or(At::Peak) {
            At::Time(t) => t,
            At::Peak => {
                summary.defaulted("moment_is_the_gpu_peak", u64::from(options.at.is_none()));
                peak_moment(&rows, options.gpu_shares)
            }
        };
        for &i in &order {
            let pod = &rows[i];
            let alive = pod.creation.is_some_and(|c| c <= moment)
                && pod.scheduled.is_some_and(|s| s <= moment)
                && pod.deletion.is_none_or(|d| moment < d);
            if alive {
                summary.read("pods_running_at_the_moment", 1);
                mapper.run(pod, &qos_of(pod, fill_qos), pod.scheduled, &mut summary)?;
            }
        }
        for &i in &order {
            let pod = &rows[i];
            if mapper.preemptors.len() >= options.next {
                break;
            }
            if pod.creation.is_some_and(|c| c > moment) {
                mapper.preempt(pod, &qos_of(pod, next_qos), &mut summary)?;
            }
        }
        Some(moment)
    } else {
        if options.at.is_some() {
            summary.warn(if timed {
                "--as-sequence: --at is ignored; pods arrive in creation order until --fill".into()
            } else {
                "the sampled pod list has no times: --at is ignored; pods arrive in file order until --fill".into()
            });
        }
        let mut arrivals = order.iter().map(|&i| &rows[i]).peekable();
        while let Some(pod) = arrivals.next_if(|_| mapper.ledger.gpu_utilization() < options.fill) {
            mapper.run(pod, &qos_of(pod, fill_qos), None, &mut summary)?;
        }
        if mapper.ledger.gpu_utilization() < options.fill {
            summary.warn(format!(
                "the pod list ran out at {:.1} % of the GPUs, below --fill {}",
                100.0 * mapper.ledger.gpu_utilization(),
                options.fill
            ));
        }
        for pod in arrivals {
            if mapper.preemptors.len() >= options.next {
                break;
            }
            mapper.preempt(pod, &qos_of(pod, next_qos), &mut summary)?;
        }
        None
    };
    let PodMapper {
        classes,
        mut ledger,
        not_fitting,
        preemptors,
        constrained_preemptors,
        ..
    } = mapper;
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
    if constrained_preemptors > 0 {
        summary.dropped("preemptor_gpu_spec_constraints", constrained_preemptors);
        summary.warn(format!(
            "{constrained_preemptors} preemptor(s) allow only some GPU models (gpu_spec); a workload class cannot say so, so they are planned without it (running pods honour it)"
        ));
    }
    if preemptors.len() < options.next {
        summary.warn(format!(
            "only {} pod(s) arrive after the moment; --next asked for {}",
            preemptors.len(),
            options.next
        ));
    }
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
    let stem = slug(pods.0.rsplit('/').next().unwrap_or(pods.0));
    let unnamed: Vec<(String, Option<String>)> =
        preemptors.iter().map(|c| (c.clone(), None)).collect();
    let workload = preemption_workload(
        match at {
            Some(t) => format!(
                "alibaba openb {stem} at t = {t} s, next {}",
                preemptors.len()
            ),
            None => format!(
                "alibaba openb {stem} filled to {}, next {}",
                options.fill,
                preemptors.len()
            ),
        },
        at,
        classes,
        running,
        &unnamed,
    );
    let comments = vec![
        format!(
            "# Imported by `coplan import alibaba-openb` from {} and {}.",
            nodes.0, pods.0
        ),
        "# Alibaba GPU cluster trace 2023 (openb): Weng et al., \"Beware of Fragmentation: Scheduling".into(),
        "# GPU-Sharing Workloads with Fragmentation Gradient Descent\", USENIX ATC 2023.".into(),
        "# How nodes and pods map to coplan: docs/import.md.".into(),
    ];
    Ok(Imported {
        cluster,
        workload,
        summary,
        comments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &str = "sn,cpu_milli,memory_mib,gpu,model\nn0,16000,65536,2,P100\nn1,8000,32768,1,T4\nn2,32000,65536,0,\n";
    const PODS: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
        p0,4000,1024,1,1000,,BE,Running,0,100,0\n\
        p1,2500,1024,1,500,,LS,Running,10,,10\n\
        p2,1000,1024,0,0,,BE,Running,20,30,20\n\
        p3,4000,1024,1,1000,T4,LS,Pending,60,,\n\
        p4,4000,1024,2,1000,,LS,Running,70,,70\n";

    #[test]
    fn pods_alive_at_the_moment_run_and_later_ones_preempt() {
        let opts = AlibabaOptions {
            at: Some(At::Time(50.0)),
            next: 5,
            ..Default::default()
        };
        let out = import(("nodes.csv", NODES), ("pods.csv", PODS), &opts).unwrap();
        // p0 and p1 are alive at 50 (p2 left at 30).
        assert_eq!(out.workload.running.len(), 2);
        assert_eq!(out.summary.rounded["gpu_shares_to_one_whole_gpu"], 1);
        assert_eq!(out.summary.rounded["pod_cpu_to_whole_cores"], 1);
        let preempt: Vec<(String, i64)> = out
            .workload
            .preempt
            .iter()
            .map(|p| (p.workload.clone(), p.count))
            .collect();
        assert_eq!(preempt, vec![("ls-1g4c".into(), 1), ("ls-2g4c".into(), 1)]);
        assert_eq!(out.summary.dropped["preemptor_gpu_spec_constraints"], 1);
        let be = out
            .workload
            .workload
            .iter()
            .find(|w| w.name == "be-1g4c")
            .unwrap();
        assert!(be.preemptible);
        assert_eq!(out.cluster.pool.len(), 3);
        assert_eq!(out.summary.defaulted["nodes_with_the_default_layout"], 3);
    }

    #[test]
    fn the_peak_is_the_earliest_moment_with_the_most_gpus() {
        let (rows, _) = read_pods(1, "pods.csv", PODS).unwrap();
        // p0 (1) + p1 (1) from 10; p4 (2) from 70 after p0 left at 100? No: p0 leaves at 100,
        // so 70..100 holds 4.
        assert_eq!(peak_moment(&rows, GpuShares::Whole), 70.0);
        assert_eq!(peak_moment(&rows, GpuShares::Drop), 70.0);
    }

    #[test]
    fn sampled_lists_fill_then_the_next_pods_preempt() {
        let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1,1,1000\nb,1000,1,1,1000\nc,1000,1,1,1000\nd,1000,1,2,1000\n";
        let opts = AlibabaOptions {
            fill: 0.6,
            next: 1,
            at: Some(At::Time(3.0)),
            ..Default::default()
        };
        let out = import(("nodes.csv", NODES), ("s.csv", pods), &opts).unwrap();
        // 3 GPUs in all: two pods reach 2/3 ≥ 0.6.
        assert_eq!(out.workload.running.len(), 2);
        assert_eq!(out.workload.preempt[0].workload, "ls-1g1c");
        assert!(
            out.summary
                .warnings
                .iter()
                .any(|w| w.contains("--at is ignored"))
        );
    }

    #[test]
    fn a_timed_list_as_a_sequence_keeps_each_pods_qos() {
        let opts = AlibabaOptions {
            as_sequence: true,
            fill: 0.5,
            next: 3,
            ..Default::default()
        };
        let out = import(("nodes.csv", NODES), ("pods.csv", PODS), &opts).unwrap();
        // p0 (BE) and p1 (LS) fill 2 of 3 GPUs; p2 (BE, CPU only) would have followed.
        let running: Vec<&str> = out
            .workload
            .running
            .iter()
            .map(|r| r.workload.as_str())
            .collect();
        assert_eq!(running, vec!["be-1g4c", "ls-1g3c"]);
        let preempt: Vec<&str> = out
            .workload
            .preempt
            .iter()
            .map(|p| p.workload.as_str())
            .collect();
        assert_eq!(preempt, vec!["be-0g1c", "ls-1g4c", "ls-2g4c"]);
        assert_eq!(out.summary.dropped["preemptor_gpu_spec_constraints"], 1);
    }

    #[test]
    fn malformed_rows_name_their_line_and_column() {
        let bad = "sn,cpu_milli,memory_mib,gpu,model\nn0,lots,1,2,P100\n";
        match import(
            ("nodes.csv", bad),
            ("pods.csv", PODS),
            &AlibabaOptions::default(),
        ) {
            Err(ImportError::At {
                file,
                line,
                message,
                ..
            }) => {
                assert_eq!((file, line), (0, 2));
                assert!(message.contains("cpu_milli"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let bad = "name,cpu_milli\n";
        assert!(matches!(
            import(
                ("nodes.csv", NODES),
                ("pods.csv", bad),
                &AlibabaOptions::default()
            ),
            Err(ImportError::At {
                file: 1,
                line: 1,
                ..
            })
        ));
    }

    #[test]
    fn the_peak_of_huge_gpu_counts_does_not_overflow() {
        let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
            p0,1000,1024,18446744073709551615,1000,,BE,Running,0,100,0\n\
            p1,1000,1024,18446744073709551615,1000,,BE,Running,10,,10\n\
            p2,1000,1024,1,1000,,LS,Pending,60,,\n";
        let opts = AlibabaOptions {
            at: Some(At::Peak),
            next: 1,
            ..Default::default()
        };
        // Pods that fit no node are counted, not placed; the peak is where both are held.
        let out = import(("nodes.csv", NODES), ("pods.csv", pods), &opts);
        assert!(out.is_ok(), "{:?}", out.err());
    }
}
