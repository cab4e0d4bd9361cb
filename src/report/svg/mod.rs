//! SVG charts and maps, drawn with plotters.
