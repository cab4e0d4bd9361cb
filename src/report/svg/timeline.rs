//! `coplan timeline --format svg`: a static Gantt chart of a co-location run, one row per
//! (node, stage), its ops as bars coloured by what they do, over time in seconds.
//!
//! A run logs up to millions of ops, far more than there are pixels. Each pixel column of a
//! row is drawn in the kind of op covering most of it (a column no op touches stays empty),
//! and runs of equal columns become one rectangle, so the file grows with rows × width rather
//! than with the ops and shows what the eye can tell apart at this size. Past `MAX_ROWS` rows
//! only the first are drawn, and the subtitle says so.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::error::SvgError;
use super::style::{
    GRID, INK, LABEL_SIZE, LegendEntry, Mark, decimals, draw_mesh, fixed, header, legend,
    legend_height, no_data, render, text, tick_decimals,
};
use crate::plan::colocation::{ColocationRun, Op, OpKind};

const WIDTH: u32 = 1200;
const HEADER_HEIGHT: u32 = 62;
const MAX_ROWS: usize = 48;
const LABEL_AREA: u32 = 150;
const AXIS_AREA: u32 = 48;
const MARGIN: u32 = 12;
const X_TICKS: usize = 12;

/// What an op does, as the chart tells it: a forward is a prefill for an inference request
/// and a training forward for a training task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activity {
    Prefill,
    Decode,
    TrainingForward,
    TrainingBackward,
    Offload,
    Reload,
    Sync,
}

const ACTIVITIES: [Activity; 7] = [
    Activity::Prefill,
    Activity::Decode,
    Activity::TrainingForward,
    Activity::TrainingBackward,
    Activity::Offload,
    Activity::Reload,
    Activity::Sync,
];

impl Activity {
    fn label(self) -> &'static str {
        match self {
            Activity::Prefill => "prefill (inference forward)",
            Activity::Decode => "decode",
            Activity::TrainingForward => "training forward",
            Activity::TrainingBackward => "training backward",
            Activity::Offload => "offload",
            Activity::Reload => "reload",
            Activity::Sync => "weight sync",
        }
    }

    fn colour(self) -> RGBColor {
        match self {
            Activity::Prefill => RGBColor(0xF2, 0x8E, 0x2B),
            Activity::Decode => RGBColor(0x4E, 0x79, 0xA7),
            Activity::TrainingForward => RGBColor(0x59, 0xA1, 0x4F),
            Activity::TrainingBackward => RGBColor(0xB0, 0x7A, 0xA1),
            Activity::Offload => RGBColor(0xE1, 0x57, 0x59),
            Activity::Reload => RGBColor(0xFF, 0x9D, 0xA7),
            Activity::Sync => RGBColor(0x33, 0x33, 0x33),
        }
    }

    fn index(self) -> usize {
        ACTIVITIES.iter().position(|a| *a == self).unwrap_or(0)
    }
}

fn activity(op: &Op, training: &[bool]) -> Activity {
    match op.kind {
        OpKind::Forward => {
            let trains = op
                .tasks
                .iter()
                .any(|t| training.get(t.index()).copied().unwrap_or(false));
            if trains {
                Activity::TrainingForward
            } else {
                Activity::Prefill
            }
        }
        OpKind::Backward => Activity::TrainingBackward,
        OpKind::Decode => Activity::Decode,
        OpKind::Offload => Activity::Offload,
        OpKind::Reload => Activity::Reload,
        OpKind::Sync => Activity::Sync,
    }
}

/// Per row, the time each activity covers in each pixel column.
struct Coverage {
    width: usize,
    cells: Vec<[f32; ACTIVITIES.len()]>,
}

impl Coverage {
    fn new(rows: usize, width: usize) -> Self {
        Coverage {
            width,
            cells: vec![[0.0; ACTIVITIES.len()]; rows * width],
        }
    }

    /// Adds an op spanning pixels `x0..x1` (fractional) of `row`.
    fn add(&mut self, row: usize, x0: f64, x1: f64, what: Activity) {
        let (x0, x1) = (x0.max(0.0), x1.min(self.width as f64));
        if x1 <= x0 {
            return;
        }
        let first = x0.floor() as usize;
        let last = (x1.ceil() as usize).min(self.width);
        for px in first..last {
            let covered = x1.min(px as f64 + 1.0) - x0.max(px as f64);
            if let Some(cell) = self.cells.get_mut(row * self.width + px) {
                cell[what.index()] += covered as f32;
            }
        }
    }

    /// The runs of a row: (first column, end column, activity), columns no op touches left
    /// out.
    fn runs(&self, row: usize) -> Vec<(usize, usize, Activity)> {
        let mut runs: Vec<(usize, usize, Activity)> = Vec::new();
        for px in 0..self.width {
            let Some(cell) = self.cells.get(row * self.width + px) else {
                break;
            };
            let mut best: Option<(f32, Activity)> = None;
            for (covered, what) in cell.iter().zip(ACTIVITIES) {
                if *covered > 0.0 && best.is_none_or(|(b, _)| *covered > b) {
                    best = Some((*covered, what));
                }
            }
            let Some((_, what)) = best else {
                continue;
            };
            match runs.last_mut() {
                Some((_, end, last)) if *end == px && *last == what => *end = px + 1,
                _ => runs.push((px, px + 1, what)),
            }
        }
        runs
    }
}

/// The run as a Gantt chart; `title` names it (planner, workload, cluster).
pub fn colocation_run(
    run: &ColocationRun,
    nodes: usize,
    stages: usize,
    title: &str,
) -> Result<String, SvgError> {
    let all_rows = nodes.saturating_mul(stages);
    let rows = all_rows.min(MAX_ROWS);
    let end = run
        .ops
        .iter()
        .map(|op| op.end_s)
        .filter(|t| t.is_finite())
        .fold(0.0f64, f64::max);
    if rows == 0 || run.ops.is_empty() || end <= 0.0 {
        return no_data(title);
    }
    let mut training: Vec<bool> = Vec::new();
    for o in &run.outcomes {
        let i = o.task.index();
        if training.len() <= i {
            training.resize(i + 1, false);
        }
        training[i] = o.training;
    }
    let mut present = [false; ACTIVITIES.len()];
    for op in &run.ops {
        present[activity(&op, &training).index()] = true;
    }
    let entries: Vec<LegendEntry> = ACTIVITIES
        .iter()
        .filter(|a| present[a.index()])
        .map(|a| LegendEntry {
            label: a.label().to_string(),
            colour: a.colour(),
            mark: Mark::Swatch,
        })
        .collect();
    let row_height: u32 = if rows <= 16 { 26 } else { 18 };
    let plot_width = WIDTH - LABEL_AREA - 3 * MARGIN;
    let pixel_ms = end / f64::from(plot_width) * 1000.0;
    let mut subtitle = format!(
        "{} ops over {} s on {nodes} nodes × {stages} stages; each pixel column (≈ {} ms) \
         shows the op kind covering most of it",
        run.ops.len(),
        fixed(end, decimals(end)),
        fixed(pixel_ms, decimals(pixel_ms)),
    );
    if rows < all_rows {
        subtitle.push_str(&format!(" (first {rows} of {all_rows} rows)"));
    }
    let height = HEADER_HEIGHT
        + legend_height(&entries, WIDTH)
        + rows as u32 * row_height
        + AXIS_AREA
        + 2 * MARGIN;
    render((WIDTH, height), |root| {
        let body = header(root, title, Some(&subtitle))?;
        let body = legend(&body, &entries)?;
        let mut chart = ChartBuilder::on(&body)
            .margin(MARGIN)
            .margin_right(2 * MARGIN)
            .x_label_area_size(AXIS_AREA)
            .y_label_area_size(LABEL_AREA)
            .build_cartesian_2d(0.0..end, 0.0..rows as f64)?;
        let digits = tick_decimals(end, X_TICKS);
        let x_format = |v: &f64| fixed(*v, digits);
        draw_mesh(
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(0)
                .x_labels(X_TICKS)
                .x_label_formatter(&x_format)
                .x_desc("time (s)"),
        )?;
        let plot = chart.plotting_area().strip_coord_spec();
        let (width, plot_height) = plot.dim_in_pixel();
        let lane = f64::from(plot_height) / rows as f64;
        let lane_top = |r: usize| (r as f64 * lane).round() as i32;
        let mut coverage = Coverage::new(rows, width as usize);
        let scale = f64::from(width) / end;
        for op in &run.ops {
            let row = op.node * stages + op.stage;
            if op.node >= nodes || op.stage >= stages || row >= rows {
                continue;
            }
            if op.start_s.is_finite() && op.end_s.is_finite() {
                coverage.add(
                    row,
                    op.start_s * scale,
                    op.end_s * scale,
                    activity(&op, &training),
                );
            }
        }
        let base = plot.get_base_pixel();
        let label_style = text(LABEL_SIZE, INK, HPos::Right, VPos::Center);
        for r in 0..rows {
            let (top, bottom) = (lane_top(r), lane_top(r + 1));
            if stages > 1 && r % stages == 0 && r > 0 {
                plot.draw(&PathElement::new(
                    vec![(0, top), (width as i32, top)],
                    GRID.stroke_width(1),
                ))?;
            }
            let label = format!("node {} · stage {}", r / stages, r % stages);
            root.draw_text(
                &label,
                &label_style,
                (base.0 - 8, base.1 + (top + bottom) / 2),
            )?;
            let inset = ((bottom - top) / 6).max(1);
            for (first, last, what) in coverage.runs(r) {
                plot.draw(&Rectangle::new(
                    [(first as i32, top + inset), (last as i32, bottom - inset)],
                    what.colour().filled(),
                ))?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_column_takes_the_kind_covering_most_of_it_and_equal_columns_merge() {
        let mut c = Coverage::new(2, 10);
        // Decode over columns 0..3.6, a prefill over 3.6..4.0, then decode again to 6.
        c.add(0, 0.0, 3.6, Activity::Decode);
        c.add(0, 3.6, 4.0, Activity::Prefill);
        c.add(0, 4.0, 6.0, Activity::Decode);
        // Past the right edge and of no width: cut and ignored.
        c.add(1, 8.5, 20.0, Activity::Sync);
        c.add(1, 2.0, 2.0, Activity::Offload);
        assert_eq!(c.runs(0), vec![(0, 6, Activity::Decode)]);
        assert_eq!(c.runs(1), vec![(8, 10, Activity::Sync)]);
        c.add(0, 7.2, 7.4, Activity::Offload);
        assert_eq!(
            c.runs(0),
            vec![(0, 6, Activity::Decode), (7, 8, Activity::Offload)]
        );
    }
}
