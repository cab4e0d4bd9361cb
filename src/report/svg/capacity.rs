//! `coplan capacity --plot`: a metric against a size (servers in a pool, …), a line per
//! planner with 95 % CI whiskers, the target as a dashed line, and each planner's answer ringed
//! on its line with a dashed drop to the size axis. Where a planner's intervals straddle the
//! target, the bracket of sizes its answer could lie in is shaded in its colour.
//!
//! The chart has its own input, so that any search over sizes can be drawn by it.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::error::SvgError;
use super::style::{
    INK, LABEL_SIZE, LegendEntry, Mark, bounded, decimals, draw_mesh, fixed, header, legend,
    legend_height, no_data, planner_colours, render, text, tick_decimals, value_range,
};

/// The metric at one size, over seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityPoint {
    /// The size (servers in the pool, …) the metric was measured at.
    pub size: u32,
    /// Mean of the metric over the seeds.
    pub mean: f64,
    /// Half-width of the 95 % confidence interval of the mean.
    pub ci95: Option<f64>,
}

/// One planner's search.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityCurve {
    /// The planner's registry name, which also picks its colour.
    pub planner: String,
    /// The metric at each size the search tried, in any order (drawn in size order).
    pub points: Vec<CapacityPoint>,
    /// The size that meets the target, when one does.
    pub answer: Option<u32>,
    /// The sizes the answer lies between when an interval straddles the target.
    pub bracket: Option<(u32, u32)>,
}

/// The input of `coplan capacity --plot`: every planner's metric against the size, and the target.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityChart {
    /// The chart's title.
    pub title: String,
    /// The metric on the value axis (its name in the results, e.g. `hit_rate`).
    pub metric: String,
    /// The target the metric must reach, in the metric's own unit (a dashed line).
    pub target_value: f64,
    /// `>=` or `<=`.
    pub target_op: String,
    /// What the size counts, e.g. "servers in pool gpu-".
    pub size_label: String,
    /// One curve per planner, in legend order.
    pub curves: Vec<CapacityCurve>,
}

const WIDTH: u32 = 1100;
const PLOT_HEIGHT: u32 = 560;
const HEADER_HEIGHT: u32 = 62;
const Y_TICKS: usize = 8;

/// A drawable point: (size, mean, low, high).
type Drawn = (f64, f64, f64, f64);

/// The plot area, sizes across and the metric up.
type Plot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The points of a curve that can be drawn, in size order.
fn drawable(curve: &CapacityCurve) -> Vec<Drawn> {
    let mut points: Vec<Drawn> = curve
        .points
        .iter()
        .filter(|p| p.mean.is_finite())
        .map(|p| {
            let mean = bounded(p.mean);
            let half = p.ci95.filter(|c| c.is_finite()).unwrap_or(0.0);
            (
                f64::from(p.size),
                mean,
                bounded(mean - half),
                bounded(mean + half),
            )
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

fn legend_label(curve: &CapacityCurve) -> String {
    match (curve.answer, curve.bracket) {
        (Some(a), Some((lo, hi))) => format!("{}: answer {a} (bracket {lo}–{hi})", curve.planner),
        (Some(a), None) => format!("{}: answer {a}", curve.planner),
        (None, Some((lo, hi))) => format!(
            "{}: between {lo} and {hi} (the CI straddles the target)",
            curve.planner
        ),
        (None, None) => format!("{}: no size meets the target", curve.planner),
    }
}

/// The capacity chart as SVG text; a "no data" picture when no curve has a finite point.
pub fn capacity(chart: &CapacityChart) -> Result<String, SvgError> {
    let curves: Vec<Vec<Drawn>> = chart.curves.iter().map(drawable).collect();
    if curves.iter().all(Vec::is_empty) {
        return no_data(&chart.title);
    }
    let names: Vec<&str> = chart.curves.iter().map(|c| c.planner.as_str()).collect();
    let colours = planner_colours(&names);
    let entries: Vec<LegendEntry> = chart
        .curves
        .iter()
        .zip(&colours)
        .map(|(curve, colour)| LegendEntry {
            label: legend_label(curve),
            colour: *colour,
            mark: Mark::Line,
        })
        .collect();
    let target = bounded(chart.target_value);
    let target_shown = target.is_finite();
    let subtitle = format!(
        "{} against {}; points: mean, whiskers: 95 % CI; dashed: the target; ring: answer; \
         shaded: bracket",
        chart.metric, chart.size_label
    );
    let (x_lo, x_hi) = size_range(chart, &curves);
    let (bottom, top) = value_bounds(&curves, target_shown.then_some(target));
    let y_digits = tick_decimals(top - bottom, Y_TICKS);
    let y_format = |v: &f64| fixed(*v, y_digits);
    // Sizes are whole: ticks between them are left blank.
    let x_format = |v: &f64| {
        if (v - v.round()).abs() < 1e-6 {
            fixed(v.round(), 0)
        } else {
            String::new()
        }
    };

    let height = HEADER_HEIGHT + legend_height(&entries, WIDTH) + PLOT_HEIGHT;
    render((WIDTH, height), |root| {
        let body = header(root, &chart.title, Some(&subtitle))?;
        let body = legend(&body, &entries)?;
        let mut plot = ChartBuilder::on(&body)
            .margin(16)
            .x_label_area_size(46)
            .y_label_area_size(76)
            .build_cartesian_2d(x_lo..x_hi, bottom..top)?;
        draw_mesh(
            plot.configure_mesh()
                .x_labels(12)
                .y_labels(Y_TICKS)
                .x_label_formatter(&x_format)
                .y_label_formatter(&y_format)
                .x_desc(chart.size_label.as_str())
                .y_desc(chart.metric.as_str()),
        )?;
        draw_brackets(&mut plot, chart, &colours, (bottom, top))?;
        if target_shown {
            draw_target(&mut plot, chart, target, (x_lo, x_hi))?;
        }
        draw_curves(&mut plot, &curves, &colours)?;
        draw_answers(&mut plot, chart, &curves, &colours, (bottom, top))
    })
}

/// The size axis: every size drawn, answered or bracketed, with a margin either side.
fn size_range(chart: &CapacityChart, curves: &[Vec<Drawn>]) -> (f64, f64) {
    let sizes = curves
        .iter()
        .flatten()
        .map(|p| p.0)
        .chain(chart.curves.iter().flat_map(|c| {
            let bracket = c.bracket.into_iter().flat_map(|(lo, hi)| [lo, hi]);
            c.answer.into_iter().chain(bracket).map(f64::from)
        }));
    let (x_lo, x_hi) = sizes.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let x_pad = ((x_hi - x_lo) * 0.05).max(0.5);
    (x_lo - x_pad, x_hi + x_pad)
}

/// The value axis: every mean and whisker, and the target when it is drawn.
fn value_bounds(curves: &[Vec<Drawn>], target: Option<f64>) -> (f64, f64) {
    let values = curves
        .iter()
        .flatten()
        .flat_map(|p| [p.1, p.2, p.3])
        .chain(target);
    let (y_lo, y_hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    value_range(y_lo, y_hi, None, None)
}

/// Each straddling planner's bracket of sizes, shaded in its colour.
fn draw_brackets(
    plot: &mut Plot<'_, '_>,
    chart: &CapacityChart,
    colours: &[RGBColor],
    (bottom, top): (f64, f64),
) -> Result<(), SvgError> {
    for (curve, colour) in chart.curves.iter().zip(colours) {
        if let Some((lo, hi)) = curve.bracket {
            let (lo, hi) = (f64::from(lo.min(hi)), f64::from(lo.max(hi)));
            let (lo, hi) = if hi - lo < 0.5 {
                (lo - 0.25, hi + 0.25)
            } else {
                (lo, hi)
            };
            plot.draw_series(std::iter::once(Rectangle::new(
                [(lo, bottom), (hi, top)],
                colour.mix(0.12).filled(),
            )))?;
        }
    }
    Ok(())
}

/// The target as a dashed line across, labelled at the small sizes.
fn draw_target(
    plot: &mut Plot<'_, '_>,
    chart: &CapacityChart,
    target: f64,
    (x_lo, x_hi): (f64, f64),
) -> Result<(), SvgError> {
    let target_text = format!(
        "target: {} {} {}",
        chart.metric,
        chart.target_op,
        fixed(target, decimals(target))
    );
    // The label sits at the small sizes, on the side of the line the curves leave free there
    // (below a `>=` target the small sizes fall short, above a `<=` one they exceed it).
    let below = chart.target_op.trim() == "<=";
    plot.draw_series(DashedLineSeries::new(
        vec![(x_lo, target), (x_hi, target)],
        10,
        6,
        INK.stroke_width(2),
    ))?;
    let (dy, v) = if below {
        (6, VPos::Top)
    } else {
        (-6, VPos::Bottom)
    };
    plot.draw_series(std::iter::once(
        EmptyElement::at((x_lo, target))
            + Text::new(target_text, (8, dy), text(LABEL_SIZE, INK, HPos::Left, v)),
    ))?;
    Ok(())
}

/// Every planner's line, its points and their CI whiskers.
fn draw_curves(
    plot: &mut Plot<'_, '_>,
    curves: &[Vec<Drawn>],
    colours: &[RGBColor],
) -> Result<(), SvgError> {
    for (points, colour) in curves.iter().zip(colours) {
        let whisker = colour.stroke_width(2);
        for &(x, _, lo, hi) in points.iter().filter(|p| p.3 > p.2) {
            plot.draw_series(std::iter::once(PathElement::new(
                vec![(x, lo), (x, hi)],
                whisker,
            )))?;
            plot.draw_series([lo, hi].map(|y| {
                EmptyElement::at((x, y)) + PathElement::new(vec![(-5, 0), (5, 0)], whisker)
            }))?;
        }
        plot.draw_series(LineSeries::new(
            points.iter().map(|p| (p.0, p.1)),
            colour.stroke_width(2),
        ))?;
        plot.draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.0, p.1), 4, colour.filled())),
        )?;
    }
    Ok(())
}

/// Each planner's answer: a dashed drop to the size axis, ringed where it lies on the line.
fn draw_answers(
    plot: &mut Plot<'_, '_>,
    chart: &CapacityChart,
    curves: &[Vec<Drawn>],
    colours: &[RGBColor],
    (bottom, top): (f64, f64),
) -> Result<(), SvgError> {
    for ((curve, points), colour) in chart.curves.iter().zip(curves).zip(colours) {
        let Some(answer) = curve.answer.map(f64::from) else {
            continue;
        };
        let at = points.iter().find(|p| p.0 == answer).map(|p| p.1);
        plot.draw_series(DashedLineSeries::new(
            vec![(answer, bottom), (answer, at.unwrap_or(top))],
            6,
            4,
            colour.stroke_width(2),
        ))?;
        if let Some(y) = at {
            plot.draw_series(std::iter::once(Circle::new(
                (answer, y),
                9,
                colour.stroke_width(3),
            )))?;
        }
    }
    Ok(())
}

/// The chart of a `coplan capacity` pool-size search: every planner's metric at every size
/// tried, its answer or bracket. `None` for a co-location report, which searches a rate.
pub fn pool_search(r: &crate::sim::capacity::CapacityReport) -> Option<CapacityChart> {
    let (target, pool) = (r.target.as_ref()?, r.pool.as_ref()?);
    let size = |v: f64| v.round().max(0.0) as u32;
    Some(CapacityChart {
        title: format!(
            "{} on {}: fewest servers for {} {} {}",
            r.workload.as_deref().unwrap_or("workload"),
            r.cluster,
            target.metric,
            target.op_text(),
            target.value
        ),
        metric: target.metric.clone(),
        target_value: target.value,
        target_op: target.op_text().into(),
        size_label: format!(
            "servers in pool `{}` ({})",
            pool.name_prefix, pool.server_type
        ),
        curves: r
            .planners
            .iter()
            .map(|p| CapacityCurve {
                planner: p.planner.clone(),
                points: p
                    .probes
                    .iter()
                    .filter_map(|q| {
                        q.metric.as_ref().map(|m| CapacityPoint {
                            size: size(q.value),
                            mean: m.mean,
                            ci95: m.ci95,
                        })
                    })
                    .collect(),
                answer: p.answer.map(size),
                bracket: p.bracket.map(|[lo, hi]| (size(lo), size(hi))),
            })
            .collect(),
    })
}
