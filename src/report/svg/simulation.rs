//! `coplan simulate --plot`: one panel per headline metric, one bar per planner (the mean over
//! seeds) with a whisker for the 95 % confidence interval of that mean when there is one.
//! A whisker cut at what the metric can be (0 %, 100 %, no fewer than 0 pods) has no cap at
//! that end.

use std::collections::BTreeMap;

use plotters::prelude::*;

use super::error::SvgError;
use super::headline::{COLOCATION, Headline, PREEMPTION};
use super::style::{
    Area, INK, Mark, draw_mesh, empty_panel, fixed, header, legend, legend_height, no_data,
    panel_chart, planner_colours, planner_entries, render, tick_decimals, value_range,
};
use crate::sim::colocation::ColocationSimulation;
use crate::sim::preemption::PreemptionSimulation;
use crate::sim::stats::Summary;

const WIDTH: u32 = 1200;
const PANEL_HEIGHT: u32 = 330;
const COLUMNS: usize = 3;
const HEADER_HEIGHT: u32 = 62;
const Y_TICKS: usize = 6;

type Metrics = BTreeMap<String, Summary>;

/// The bars of a preemption simulation.
pub fn preemption(sim: &PreemptionSimulation) -> Result<String, SvgError> {
    let title = title(sim.workload.as_deref(), &sim.cluster);
    let subtitle = format!(
        "{} seeds × {} cycles; bars: mean over seeds, whiskers: 95 % CI of the mean (Student t)",
        sim.seeds.len(),
        sim.cycles
    );
    let planners: Vec<(&str, &Metrics)> = sim
        .planners
        .iter()
        .map(|p| (p.name.as_str(), &p.metrics))
        .collect();
    bars(&title, &subtitle, &PREEMPTION, &planners)
}

/// The bars of a co-location simulation.
pub fn colocation(sim: &ColocationSimulation) -> Result<String, SvgError> {
    let title = title(sim.workload.as_deref(), &sim.cluster);
    let subtitle = format!(
        "{} seeds; bars: mean over seeds, whiskers: 95 % CI of the mean (Student t)",
        sim.seeds.len()
    );
    let planners: Vec<(&str, &Metrics)> = sim
        .planners
        .iter()
        .map(|p| (p.name.as_str(), &p.metrics))
        .collect();
    bars(&title, &subtitle, &COLOCATION, &planners)
}

fn title(workload: Option<&str>, cluster: &str) -> String {
    match workload {
        Some(w) => format!("simulation of {w} on {cluster}"),
        None => format!("simulation on {cluster}"),
    }
}

fn bars(
    title: &str,
    subtitle: &str,
    headlines: &[Headline],
    planners: &[(&str, &Metrics)],
) -> Result<String, SvgError> {
    if planners.is_empty() {
        return no_data(title);
    }
    let names: Vec<&str> = planners.iter().map(|(name, _)| *name).collect();
    let colours = planner_colours(&names);
    let entries = planner_entries(&names, &colours, Mark::Swatch);
    let rows = headlines.len().div_ceil(COLUMNS).max(1);
    let height = HEADER_HEIGHT + legend_height(&entries, WIDTH) + rows as u32 * PANEL_HEIGHT;
    render((WIDTH, height), |root| {
        let body = header(root, title, Some(subtitle))?;
        let body = legend(&body, &entries)?;
        for (panel, headline) in body.split_evenly((rows, COLUMNS)).iter().zip(headlines) {
            bar_panel(panel, headline, planners, &colours)?;
        }
        Ok(())
    })
}

/// One planner's bar: its slot, mean and interval, with whether each end of the interval is
/// the true one (and gets a cap) or was cut at the metric's range.
struct Bar {
    slot: usize,
    colour: RGBColor,
    mean: f64,
    interval: Option<((f64, bool), (f64, bool))>,
}

fn bar_of(slot: usize, colour: RGBColor, summary: &Summary, headline: &Headline) -> Option<Bar> {
    if !summary.mean.is_finite() {
        return None;
    }
    let end = |v: f64| {
        let shown = headline.clamp(v);
        (shown, shown == v * headline.scale)
    };
    Some(Bar {
        slot,
        colour,
        mean: headline.clamp(summary.mean),
        interval: summary
            .ci95
            .filter(|ci| ci.is_finite())
            .map(|ci| (end(summary.mean - ci), end(summary.mean + ci))),
    })
}

fn bar_panel(
    area: &Area,
    headline: &Headline,
    planners: &[(&str, &Metrics)],
    colours: &[RGBColor],
) -> Result<(), SvgError> {
    let bars: Vec<Bar> = planners
        .iter()
        .zip(colours)
        .enumerate()
        .filter_map(|(slot, ((_, metrics), colour))| {
            bar_of(slot, *colour, metrics.get(headline.key)?, headline)
        })
        .collect();
    if bars.is_empty() {
        return empty_panel(area, headline.title);
    }
    let values = bars.iter().flat_map(|b| {
        let (lo, hi) = b.interval.map_or((b.mean, b.mean), |(lo, hi)| (lo.0, hi.0));
        [b.mean, lo, hi]
    });
    let (lo, hi) = values.fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (bottom, top) = value_range(lo, hi, headline.floor, headline.ceiling);
    let digits = tick_decimals(top - bottom, Y_TICKS);
    let y_format = |v: &f64| fixed(*v, digits);
    // Under each bar, its mean: a bar of zero height still reads as a value, not a gap.
    let x_format = |v: &f64| {
        let slot = v.round();
        if (v - slot).abs() > 1e-6 || slot < 0.0 {
            return String::new();
        }
        match bars.iter().find(|b| b.slot == slot as usize) {
            Some(b) => fixed(b.mean, digits + 1),
            None => "n/a".to_string(),
        }
    };
    let slots = planners.len() as f64;
    let mut chart =
        panel_chart(area, headline.title, 40).build_cartesian_2d(-0.5..slots - 0.5, bottom..top)?;
    draw_mesh(
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(planners.len())
            .y_labels(Y_TICKS)
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .x_desc("planner (mean under each bar)")
            .y_desc(headline.axis),
    )?;
    let base = 0.0f64.clamp(bottom, top);
    chart.draw_series(bars.iter().map(|b| {
        let x = b.slot as f64;
        Rectangle::new([(x - 0.34, base), (x + 0.34, b.mean)], b.colour.filled())
    }))?;
    for b in &bars {
        let Some(((lo, lo_true), (hi, hi_true))) = b.interval else {
            continue;
        };
        let x = b.slot as f64;
        let whisker = INK.stroke_width(2);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, lo), (x, hi)],
            whisker,
        )))?;
        let caps = [(lo, lo_true), (hi, hi_true)];
        chart.draw_series(
            caps.iter()
                .filter(|(_, real)| *real)
                .map(|(y, _)| PathElement::new(vec![(x - 0.12, *y), (x + 0.12, *y)], whisker)),
        )?;
    }
    Ok(())
}
