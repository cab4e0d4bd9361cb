//! `coplan sweep --plot` and `coplan merge --plot`: one panel per headline metric, a line per
//! planner over the values of the first swept key with its 95 % confidence band over seeds
//! (mean ± t·sd/√n, from `sim::stats::summarize`).
//!
//! With several keys swept, each combination of the other keys gets its own row of panels,
//! named above the row, so that every panel compares the planners under the same settings;
//! the rows share each metric's scale so that they compare with each other too. Past
//! `MAX_ROWS` combinations only the first are drawn, and the subtitle says so.
//!
//! The x axis is numeric when every value of the key reads as a number, else one slot per
//! value in the order the rows first name them.

use std::collections::BTreeMap;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::error::SvgError;
use super::headline::{Headline, for_metrics};
use super::style::{
    Area, CAPTION_SIZE, FONT, INK, LABEL_SIZE, MARGIN, Mark, SMALL_SIZE, bounded, draw_mesh,
    empty_panel, fit, fixed, header, legend, legend_height, no_data, panel_chart, planner_colours,
    planner_entries, render, text, tick_decimals, value_range,
};
use crate::sim::stats::summarize;
use crate::sim::sweep::SweepOutput;

const MAX_ROWS: usize = 6;
const HEADER_HEIGHT: u32 = 62;
const ROW_HEADING: u32 = 26;
const X_TICKS: usize = 6;
const Y_TICKS: usize = 6;

/// The sweep's values grouped by (combination, planner, x value, headline).
struct Grouped {
    headlines: &'static [Headline],
    x_key: String,
    x_values: Vec<String>,
    combinations: Vec<Vec<(String, String)>>,
    planners: Vec<String>,
    values: BTreeMap<(usize, usize, usize, usize), Vec<f64>>,
}

/// Index of `item` in `list`, appended when new: first-appearance order.
fn slot<T: PartialEq + Clone>(list: &mut Vec<T>, item: &T) -> usize {
    match list.iter().position(|x| x == item) {
        Some(i) => i,
        None => {
            list.push(item.clone());
            list.len() - 1
        }
    }
}

fn group(out: &SweepOutput) -> Grouped {
    let headlines = for_metrics(out.rows.iter().map(|r| &*r.metric));
    let mut g = Grouped {
        headlines,
        x_key: out
            .keys
            .first()
            .cloned()
            .unwrap_or_else(|| "scenario".into()),
        x_values: Vec::new(),
        combinations: Vec::new(),
        planners: Vec::new(),
        values: BTreeMap::new(),
    };
    for row in &out.rows {
        let Some(metric) = headlines.iter().position(|h| *h.key == *row.metric) else {
            continue;
        };
        if !row.value.is_finite() {
            continue;
        }
        let x = match row.params.first() {
            Some((_, value)) => value.clone(),
            None => row.scenario.to_string(),
        };
        let rest = row.params.get(1..).unwrap_or_default().to_vec();
        let key = (
            slot(&mut g.combinations, &rest),
            slot(&mut g.planners, &row.planner.to_string()),
            slot(&mut g.x_values, &x),
            metric,
        );
        g.values.entry(key).or_default().push(row.value);
    }
    g
}

/// The x axis: the values as numbers, or their slots.
struct XAxis {
    positions: Vec<f64>,
    categorical: bool,
    range: (f64, f64),
}

fn x_axis(values: &[String]) -> XAxis {
    let numbers: Option<Vec<f64>> = values
        .iter()
        .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    match numbers {
        Some(numbers) => {
            let positions: Vec<f64> = numbers.into_iter().map(bounded).collect();
            let lo = positions.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = positions.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let pad = if hi - lo > 1e-12 {
                (hi - lo) * 0.05
            } else {
                (hi.abs() * 0.1).max(0.5)
            };
            XAxis {
                positions,
                categorical: false,
                range: (lo - pad, hi + pad),
            }
        }
        None => XAxis {
            positions: (0..values.len()).map(|i| i as f64).collect(),
            categorical: true,
            range: (-0.5, values.len() as f64 - 0.5),
        },
    }
}

/// A point of a line as drawn: x, mean, and the ends of its interval (the mean itself
/// without one).
type Point = (f64, f64, f64, f64);

/// The line of one planner in one panel, in x order.
fn line(g: &Grouped, x: &XAxis, combination: usize, planner: usize, metric: usize) -> Vec<Point> {
    let headline = &g.headlines[metric];
    let mut points: Vec<Point> = (0..g.x_values.len())
        .filter_map(|xi| {
            let s = summarize(g.values.get(&(combination, planner, xi, metric))?)?;
            let half = s.ci95.filter(|c| c.is_finite()).unwrap_or(0.0);
            Some((
                x.positions[xi],
                headline.clamp(s.mean),
                headline.clamp(s.mean - half),
                headline.clamp(s.mean + half),
            ))
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// The sweep as one picture; `subject` names what was swept (the cluster and workload, or the
/// merged files) in the title.
pub fn sweep(out: &SweepOutput, subject: Option<&str>) -> Result<String, SvgError> {
    let title = match subject {
        Some(s) => format!("sweep of {s}"),
        None => "sweep".to_string(),
    };
    let g = group(out);
    if g.values.is_empty() {
        return no_data(&title);
    }
    let x = x_axis(&g.x_values);
    let rows = g.combinations.len().min(MAX_ROWS);
    // lines[combination][planner][metric]
    let lines: Vec<Vec<Vec<Vec<Point>>>> = (0..rows)
        .map(|c| {
            (0..g.planners.len())
                .map(|p| {
                    (0..g.headlines.len())
                        .map(|m| line(&g, &x, c, p, m))
                        .collect()
                })
                .collect()
        })
        .collect();
    let y_ranges: Vec<Option<(f64, f64)>> = (0..g.headlines.len())
        .map(|m| {
            let ends = lines
                .iter()
                .flat_map(|planners| planners.iter().flat_map(|metrics| &metrics[m]))
                .flat_map(|&(_, mean, lo, hi)| [mean, lo, hi]);
            let (lo, hi) = ends.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
            (lo <= hi).then(|| {
                let h = &g.headlines[m];
                value_range(lo, hi, h.floor, h.ceiling)
            })
        })
        .collect();
    let names: Vec<&str> = g.planners.iter().map(String::as_str).collect();
    let colours = planner_colours(&names);
    let entries = planner_entries(&names, &colours, Mark::Line);
    let subtitle = subtitle(out, &g, rows);
    // One combination: the metrics in a 3 × 2 grid; several: a row of all metrics each.
    let (width, columns, panel_rows, panel_height, heading) = if g.combinations.len() == 1 {
        (1200, 3, g.headlines.len().div_ceil(3), 330, 0)
    } else {
        (
            300 * g.headlines.len() as u32,
            g.headlines.len(),
            1,
            280,
            ROW_HEADING,
        )
    };
    let height = HEADER_HEIGHT
        + legend_height(&entries, width)
        + rows as u32 * (heading + panel_rows as u32 * panel_height);
    render((width, height), |root| {
        let body = header(root, &title, Some(&subtitle))?;
        let body = legend(&body, &entries)?;
        let blocks = body.split_evenly((rows, 1));
        for (c, block) in blocks.iter().enumerate() {
            let panels_area = if heading > 0 {
                let label = combination_label(&g.combinations[c]);
                let style = TextStyle {
                    font: (FONT, CAPTION_SIZE, FontStyle::Bold).into_font(),
                    ..text(CAPTION_SIZE, INK, HPos::Left, VPos::Center)
                };
                block.draw_text(
                    &fit(&label, CAPTION_SIZE, width as i32 - 2 * MARGIN),
                    &style,
                    (MARGIN, heading as i32 / 2 + 2),
                )?;
                block.split_vertically(heading).1
            } else {
                block.clone()
            };
            let panels = panels_area.split_evenly((panel_rows.max(1), columns.max(1)));
            for (m, panel) in panels.iter().enumerate().take(g.headlines.len()) {
                let series: Vec<(&[Point], RGBColor)> = lines[c]
                    .iter()
                    .zip(&colours)
                    .map(|(metrics, colour)| (metrics[m].as_slice(), *colour))
                    .collect();
                match y_ranges[m] {
                    Some(y) => line_panel(panel, &g, &x, m, y, &series)?,
                    None => empty_panel(panel, g.headlines[m].title)?,
                }
            }
        }
        Ok(())
    })
}

fn combination_label(params: &[(String, String)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn subtitle(out: &SweepOutput, g: &Grouped, rows: usize) -> String {
    let seeds: Vec<usize> = g.values.values().map(Vec::len).collect();
    let (fewest, most) = (
        seeds.iter().copied().min().unwrap_or(0),
        seeds.iter().copied().max().unwrap_or(0),
    );
    let seeds = if fewest == most {
        format!("{most} seeds")
    } else {
        format!("{fewest}–{most} seeds")
    };
    let mut s = format!(
        "{} scenarios; lines: mean over {seeds}, bands: 95 % CI (Student t)",
        out.scenario_count
    );
    if g.combinations.len() > 1 {
        let others: Vec<&str> = out.keys.iter().skip(1).map(String::as_str).collect();
        s.push_str(&format!("; one row per {}", others.join(" × ")));
    }
    if rows < g.combinations.len() {
        s.push_str(&format!(" (first {rows} of {} rows)", g.combinations.len()));
    }
    s
}

fn line_panel(
    area: &Area,
    g: &Grouped,
    x: &XAxis,
    metric: usize,
    (bottom, top): (f64, f64),
    series: &[(&[Point], RGBColor)],
) -> Result<(), SvgError> {
    let headline = &g.headlines[metric];
    let (w, _) = area.dim_in_pixel();
    let y_digits = tick_decimals(top - bottom, Y_TICKS);
    let y_format = |v: &f64| fixed(*v, y_digits);
    let x_digits = tick_decimals(x.range.1 - x.range.0, X_TICKS);
    let slot_width = (w as i32 - 90) / g.x_values.len().max(1) as i32;
    let x_format = |v: &f64| {
        if !x.categorical {
            return fixed(*v, x_digits);
        }
        let k = v.round();
        match g.x_values.get(k as usize) {
            Some(name) if (v - k).abs() < 1e-6 && k >= 0.0 => fit(name, SMALL_SIZE, slot_width),
            _ => String::new(),
        }
    };
    let mut chart = panel_chart(area, headline.title, 44)
        .build_cartesian_2d(x.range.0..x.range.1, bottom..top)?;
    let x_labels = if x.categorical {
        g.x_values.len()
    } else {
        X_TICKS
    };
    draw_mesh(
        chart
            .configure_mesh()
            .x_labels(x_labels)
            .y_labels(Y_TICKS)
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .x_desc(fit(&g.x_key, LABEL_SIZE, w as i32 - 90))
            .y_desc(headline.axis),
    )?;
    for (points, colour) in series {
        if points.len() > 1 {
            let band: Vec<(f64, f64)> = points
                .iter()
                .map(|p| (p.0, p.3))
                .chain(points.iter().rev().map(|p| (p.0, p.2)))
                .collect();
            chart.draw_series(std::iter::once(Polygon::new(
                band,
                colour.mix(0.16).filled(),
            )))?;
        } else {
            // A single point has no band to draw: its interval is a whisker.
            chart.draw_series(
                points.iter().map(|p| {
                    PathElement::new(vec![(p.0, p.2), (p.0, p.3)], colour.stroke_width(2))
                }),
            )?;
        }
    }
    for (points, colour) in series {
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.0, p.1)),
            colour.stroke_width(2),
        ))?;
        chart.draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.0, p.1), 3, colour.filled())),
        )?;
    }
    Ok(())
}
