//! The trace's CSV files: a header naming its columns, rows of cells read as whole numbers and
//! times, each error at its line.

use std::collections::BTreeMap;

use crate::import::error::ImportError;

/// One pod row.
#[derive(Debug, Clone)]
pub(super) struct PodRow {
    pub(super) name: String,
    pub(super) cpu_milli: u64,
    pub(super) num_gpu: u64,
    pub(super) gpu_milli: u64,
    pub(super) gpu_spec: Vec<String>,
    pub(super) qos: Option<String>,
    pub(super) creation: Option<f64>,
    pub(super) deletion: Option<f64>,
    pub(super) scheduled: Option<f64>,
}

/// A CSV file's header (column → index) and rows with their line numbers.
pub(super) struct Table {
    pub(super) columns: BTreeMap<String, usize>,
    pub(super) rows: Vec<(usize, Vec<String>)>,
}

pub(super) fn read_table(
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
    pub(super) fn cell<'a>(&self, row: &'a [String], column: &str) -> Option<&'a str> {
        self.columns
            .get(column)
            .and_then(|&i| row.get(i))
            .map(String::as_str)
    }
}

/// An integer cell, or the located error naming its column.
pub(super) fn int_cell(
    file: usize,
    line: usize,
    column: &str,
    text: &str,
) -> Result<u64, ImportError> {
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
pub(super) fn time_cell(
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

pub(super) const NODE_COLUMNS: &[&str] = &["sn", "cpu_milli", "memory_mib", "gpu", "model"];
const POD_COLUMNS: &[&str] = &["name", "cpu_milli", "num_gpu", "gpu_milli"];
const TIME_COLUMNS: &[&str] = &["creation_time", "deletion_time", "scheduled_time"];

pub(super) fn read_pods(
    file: usize,
    name: &str,
    text: &str,
) -> Result<(Vec<PodRow>, bool), ImportError> {
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
