//! What every picture shares, so that the same input always gives the same bytes: the
//! canvas, fonts, colours, number formats, the header and the legend.

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::error::SvgError;
use crate::spec::colocation::COLOCATION_PLANNERS;

/// The drawing area every printer draws on: an SVG written into a string.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A generic family: the SVG names it and the viewer picks the face, while plotters lays text
/// out with its own fixed metrics (no font files), so the layout is the same on every machine.
pub const FONT: &str = "sans-serif";
/// Font size of a picture's title, in pixels.
pub const TITLE_SIZE: f64 = 22.0;
/// Font size of a picture's subtitle, in pixels.
pub const SUBTITLE_SIZE: f64 = 15.0;
/// Font size of a panel's caption, in pixels.
pub const CAPTION_SIZE: f64 = 16.0;
/// Font size of axis and legend labels, in pixels.
pub const LABEL_SIZE: f64 = 14.0;
/// Font size of tick labels and notes, in pixels.
pub const SMALL_SIZE: f64 = 12.0;
/// Left and right margin of headers and legends.
pub const MARGIN: i32 = 14;

/// Colour of text and axes.
pub const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// Colour of secondary text (subtitles, notes).
pub const MUTED: RGBColor = RGBColor(0x66, 0x66, 0x66);
/// Colour of grid lines.
pub const GRID: RGBColor = RGBColor(0xE3, 0xE3, 0xE3);
/// A core or GPU no pod holds.
pub const FREE: RGBColor = RGBColor(0xE6, 0xE6, 0xE6);
/// Colour of outlines around cells and boxes.
pub const OUTLINE: RGBColor = RGBColor(0x9A, 0x9A, 0x9A);

/// Planner colours: distinct for the readers with the common colour-vision deficiencies in the
/// first six, the size of either kind's planner list.
const PLANNER_PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0x79, 0x70, 0x6E),
];

/// Pod colours, dark and light in turn so that neighbouring pods differ; none is grey, the
/// colour of free resources.
pub const POD_PALETTE: [RGBColor; 18] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xFF, 0xBE, 0x7D),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xFF, 0x9D, 0x9A),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xF1, 0xCE, 0x63),
    RGBColor(0x49, 0x98, 0x94),
    RGBColor(0xFA, 0xBF, 0xD2),
    RGBColor(0x9D, 0x76, 0x60),
    RGBColor(0xA0, 0xCB, 0xE8),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x8C, 0xD1, 0x7D),
    RGBColor(0xB6, 0x99, 0x2D),
    RGBColor(0xD4, 0xA6, 0xC8),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0x86, 0xBC, 0xB6),
    RGBColor(0xD3, 0x72, 0x95),
    RGBColor(0xD7, 0xB5, 0xA6),
];

/// The order preemption planners take their colours in: the single-pod planners first, then
/// those added later, so that a planner's colour never changes when one is added.
const PREEMPTION_COLOUR_ORDER: [&str; 7] = [
    "k8s-default",
    "k8s-nrt",
    "flextopo-imp",
    "flextopo-exhaustive",
    "ilp",
    "ilp-batch",
    "kueue-tas",
];

/// Colours of planners, in the order given. A planner of the library keeps its place in its
/// kind's planner list, so it has the same colour in every picture of that kind whichever
/// subset ran; other names take the colours after the list's, in order of appearance.
pub fn planner_colours(names: &[&str]) -> Vec<RGBColor> {
    let known = |list: &[&str]| names.iter().filter(|n| list.contains(n)).count();
    let list: &[&str] = if known(&COLOCATION_PLANNERS) > known(&PREEMPTION_COLOUR_ORDER) {
        &COLOCATION_PLANNERS
    } else {
        &PREEMPTION_COLOUR_ORDER
    };
    let mut next_free = list.len();
    names
        .iter()
        .map(|name| {
            let slot = list.iter().position(|k| k == name).unwrap_or_else(|| {
                next_free += 1;
                next_free - 1
            });
            PLANNER_PALETTE[slot % PLANNER_PALETTE.len()]
        })
        .collect()
}

/// Black or white, whichever reads better on `background`.
pub fn ink_on(background: RGBColor) -> RGBColor {
    let RGBColor(r, g, b) = background;
    let luma = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
    if luma > 150.0 { INK } else { WHITE }
}

/// A text style of the shared font at `size` pixels in `colour`, anchored at (`h`, `v`).
pub fn text(size: f64, colour: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, size).into_font(),
        color: colour.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

/// The width a viewer's sans-serif face is likely to give `s`: generous, so that what is laid
/// out by it does not collide.
pub fn text_width(s: &str, size: f64) -> i32 {
    (s.chars().count() as f64 * size * 0.5).ceil() as i32
}

/// `s`, cut with an ellipsis to fit `width` pixels.
pub fn fit(s: &str, size: f64, width: i32) -> String {
    if text_width(s, size) <= width {
        return s.to_string();
    }
    let per_char = (size * 0.5).max(1.0);
    let keep = ((f64::from(width.max(0)) / per_char) as usize).saturating_sub(1);
    let mut cut: String = s.chars().take(keep).collect();
    cut.push('…');
    cut
}

/// Draws the whole canvas into a string: a white page of `size` pixels, then `draw`.
pub fn render(
    size: (u32, u32),
    draw: impl FnOnce(&Area<'_>) -> Result<(), SvgError>,
) -> Result<String, SvgError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(svg)
}

/// The small picture of an input with nothing to draw.
pub fn no_data(title: &str) -> Result<String, SvgError> {
    render((640, 160), |root| {
        let body = header(root, title, None)?;
        let (w, h) = body.dim_in_pixel();
        body.draw_text(
            "no data",
            &text(CAPTION_SIZE, MUTED, HPos::Center, VPos::Center),
            (w as i32 / 2, h as i32 / 2),
        )?;
        Ok(())
    })
}

/// A panel with its caption and nothing to show.
pub fn empty_panel(area: &Area, caption: &str) -> Result<(), SvgError> {
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    area.draw_text(
        &fit(caption, CAPTION_SIZE, w - 20),
        &text(CAPTION_SIZE, INK, HPos::Center, VPos::Top),
        (w / 2, 10),
    )?;
    area.draw_text(
        "no data",
        &text(LABEL_SIZE, MUTED, HPos::Center, VPos::Center),
        (w / 2, h / 2),
    )?;
    Ok(())
}

/// Draws the title (and a subtitle) at the top of `area`; returns the area below them.
pub fn header<'a>(
    area: &Area<'a>,
    title: &str,
    subtitle: Option<&str>,
) -> Result<Area<'a>, SvgError> {
    let width = area.dim_in_pixel().0 as i32 - 2 * MARGIN;
    let title_style = TextStyle {
        font: (FONT, TITLE_SIZE, FontStyle::Bold).into_font(),
        ..text(TITLE_SIZE, INK, HPos::Left, VPos::Top)
    };
    area.draw_text(&fit(title, TITLE_SIZE, width), &title_style, (MARGIN, 10))?;
    let mut used = 38;
    if let Some(sub) = subtitle {
        area.draw_text(
            &fit(sub, SUBTITLE_SIZE, width),
            &text(SUBTITLE_SIZE, MUTED, HPos::Left, VPos::Top),
            (MARGIN, used),
        )?;
        used += 20;
    }
    Ok(area.split_vertically(used + 4).1)
}

/// How an entry of a legend is marked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark {
    /// A filled square: bars, rectangles, map cells.
    Swatch,
    /// A short line with a dot: line charts.
    Line,
}

/// One entry of a legend.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    /// The entry's text.
    pub label: String,
    /// Colour of the entry's mark.
    pub colour: RGBColor,
    /// How the entry is marked (swatch or line).
    pub mark: Mark,
}

/// One legend entry per planner, in its colour.
pub fn planner_entries(names: &[&str], colours: &[RGBColor], mark: Mark) -> Vec<LegendEntry> {
    names
        .iter()
        .zip(colours)
        .map(|(name, colour)| LegendEntry {
            label: name.to_string(),
            colour: *colour,
            mark,
        })
        .collect()
}

const LEGEND_ROW: i32 = 22;
const LEGEND_MARK: i32 = 22;

/// Left to right, wrapping into rows: the position of each entry (x, row).
fn legend_layout(entries: &[LegendEntry], width: i32) -> Vec<(i32, i32)> {
    let mut x = MARGIN;
    let mut row = 0;
    entries
        .iter()
        .map(|e| {
            let w = LEGEND_MARK + 6 + text_width(&e.label, LABEL_SIZE).min(width) + 22;
            if x > MARGIN && x + w > width - MARGIN {
                x = MARGIN;
                row += 1;
            }
            let at = (x, row);
            x += w;
            at
        })
        .collect()
}

/// The height a legend of `entries` takes on `width` pixels.
pub fn legend_height(entries: &[LegendEntry], width: u32) -> u32 {
    let rows = legend_layout(entries, width as i32)
        .last()
        .map_or(0, |(_, row)| row + 1);
    (rows * LEGEND_ROW + 8) as u32
}

/// Draws a legend at the top of `area` and returns the area below it; the legend sits apart
/// from the data so that it never hides any.
pub fn legend<'a>(area: &Area<'a>, entries: &[LegendEntry]) -> Result<Area<'a>, SvgError> {
    let width = area.dim_in_pixel().0;
    let label_style = text(LABEL_SIZE, INK, HPos::Left, VPos::Center);
    for (e, (x, row)) in entries.iter().zip(legend_layout(entries, width as i32)) {
        let y = 4 + row * LEGEND_ROW + LEGEND_ROW / 2;
        match e.mark {
            Mark::Swatch => area.draw(&Rectangle::new(
                [(x + 4, y - 7), (x + LEGEND_MARK - 4, y + 7)],
                e.colour.filled(),
            ))?,
            Mark::Line => {
                area.draw(&PathElement::new(
                    vec![(x, y), (x + LEGEND_MARK, y)],
                    e.colour.stroke_width(3),
                ))?;
                area.draw(&Circle::new((x + LEGEND_MARK / 2, y), 4, e.colour.filled()))?;
            }
        }
        let label = fit(&e.label, LABEL_SIZE, width as i32 - 2 * MARGIN);
        area.draw_text(&label, &label_style, (x + LEGEND_MARK + 6, y))?;
    }
    Ok(area.split_vertically(legend_height(entries, width)).1)
}

/// Decimals that tell a scale's ticks apart, fixed per magnitude of the scale's span so that
/// the same data always print alike.
pub fn decimals(span: f64) -> usize {
    let span = span.abs();
    if span >= 100.0 {
        0
    } else if span >= 10.0 {
        1
    } else if span >= 1.0 {
        2
    } else if span >= 0.01 {
        3
    } else {
        4
    }
}

/// `v` with `decimals` digits, never `-0`.
pub fn fixed(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// Values beyond this are drawn at it: plotters' scales need a finite span.
const LARGEST: f64 = 1e15;

/// A value axis holding `lo..hi` with a margin, wide enough when flat, not reaching below
/// `floor` when the values do not, and reaching only a little past `ceiling` (room for the
/// caps of intervals that end there).
pub fn value_range(lo: f64, hi: f64, floor: Option<f64>, ceiling: Option<f64>) -> (f64, f64) {
    let (lo, hi) = (lo.clamp(-LARGEST, LARGEST), hi.clamp(-LARGEST, LARGEST));
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && lo <= hi {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let span = hi - lo;
    let pad = if span > 1e-12 {
        span * 0.08
    } else {
        (hi.abs() * 0.1).max(1.0)
    };
    let bottom = match floor {
        Some(f) if lo >= f => (lo - pad).max(f),
        _ => lo - pad,
    };
    let top = match ceiling {
        Some(c) if hi <= c => (hi + pad).min(c + (c - bottom) * 0.03),
        _ => hi + pad,
    };
    (bottom, top)
}

/// Decimals of tick labels on a scale of `span` with at most `ticks` ticks: enough for the
/// 1-2-5 steps plotters chooses, and fixed by the span so that the same data print alike.
pub fn tick_decimals(span: f64, ticks: usize) -> usize {
    let step = span.abs() / ticks.max(1) as f64;
    if step.is_finite() && step > 0.0 {
        (-step.log10() - 1e-9).ceil().clamp(0.0, 6.0) as usize
    } else {
        2
    }
}

/// The caption size that fits `width`, stepping down once before cutting the text.
pub fn caption(s: &str, width: i32) -> (String, f64) {
    let size = if text_width(s, CAPTION_SIZE) <= width {
        CAPTION_SIZE
    } else {
        LABEL_SIZE
    };
    (fit(s, size, width), size)
}

/// A panel's chart under its caption, fitted to the panel's width, with the margins and
/// value-axis room every panel shares; `x_label_area` is the room under it for the x labels.
pub fn panel_chart<'a, 'b, 'c>(
    area: &'a Area<'c>,
    title: &str,
    x_label_area: u32,
) -> ChartBuilder<'a, 'b, SVGBackend<'c>> {
    let (text, size) = caption(title, area.dim_in_pixel().0 as i32 - 20);
    let mut chart = ChartBuilder::on(area);
    chart
        .margin(10)
        .margin_right(16)
        .caption(text, (FONT, size))
        .x_label_area_size(x_label_area)
        .y_label_area_size(66);
    chart
}

/// Draws a chart's mesh, its ticks and names already set, in the common style: small tick
/// labels, axis names at label size, grid lines at the labelled ticks only.
pub fn draw_mesh(
    mesh: &mut MeshStyle<'_, '_, RangedCoordf64, RangedCoordf64, SVGBackend<'_>>,
) -> Result<(), SvgError> {
    mesh.label_style((FONT, SMALL_SIZE))
        .axis_desc_style((FONT, LABEL_SIZE))
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .draw()?;
    Ok(())
}

/// Keeps a value on the page (see [`LARGEST`]); NaN stays NaN for callers to skip.
pub fn bounded(v: f64) -> f64 {
    v.clamp(-LARGEST, LARGEST)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_carry_the_decimals_of_their_step() {
        // Steps plotters picks for 6 ticks: 10, 0.2, 1, 0.05.
        assert_eq!(tick_decimals(50.0, 6), 0);
        assert_eq!(tick_decimals(1.2, 6), 1);
        assert_eq!(tick_decimals(6.0, 6), 0);
        assert_eq!(tick_decimals(0.3, 6), 2);
        assert_eq!(tick_decimals(0.0, 6), 2);
        assert_eq!(tick_decimals(f64::NAN, 6), 2);
        assert_eq!(fixed(-0.0001, 2), "0.00");
        assert_eq!(fixed(-1.5, 1), "-1.5");
    }

    #[test]
    fn value_ranges_stay_finite_and_inside_the_metric() {
        assert_eq!(
            value_range(0.0, 100.0, Some(0.0), Some(100.0)),
            (0.0, 103.0)
        );
        let (bottom, top) = value_range(100.0, 100.0, Some(0.0), Some(100.0));
        assert!(bottom == 90.0 && top > 100.0 && top < 101.0);
        let (bottom, top) = value_range(f64::NAN, f64::INFINITY, None, None);
        assert!(bottom.is_finite() && top.is_finite() && bottom < top);
        let (bottom, top) = value_range(-5.0, 5.0, Some(0.0), None);
        assert!(bottom < -5.0 && top > 5.0);
    }

    #[test]
    fn planners_keep_their_colour_whichever_subset_runs() {
        use crate::spec::preemption::PREEMPTION_PLANNERS;
        let all = planner_colours(&PREEMPTION_COLOUR_ORDER);
        assert_eq!(
            PREEMPTION_PLANNERS.len(),
            PREEMPTION_COLOUR_ORDER.len(),
            "every planner has a colour of its own"
        );
        assert!(
            PREEMPTION_PLANNERS
                .iter()
                .all(|p| PREEMPTION_COLOUR_ORDER.contains(p))
        );
        let some = planner_colours(&["ilp", "flextopo-imp"]);
        assert_eq!(some, vec![all[4], all[2]]);
        let colocation = planner_colours(&COLOCATION_PLANNERS);
        assert_eq!(
            planner_colours(&["lemix", "ilp"]),
            vec![colocation[3], colocation[5]]
        );
        let unknown = planner_colours(&["mine", "theirs", "k8s-default"]);
        assert_eq!(unknown[2], all[0]);
        assert!(unknown[0] != unknown[1] && !all.contains(&unknown[0]));
    }

    #[test]
    fn long_text_is_cut_to_fit() {
        assert_eq!(fit("short", 10.0, 100), "short");
        let cut = fit(&"x".repeat(100), 10.0, 100);
        assert!(cut.ends_with('…') && text_width(&cut, 10.0) <= 100, "{cut}");
        assert_eq!(fit("abc", 10.0, -5), "…");
    }
}
