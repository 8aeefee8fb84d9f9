//! Colour maps and value scales for heat maps, and the line palette for curves.
//!
//! Fields use viridis (perceptually uniform, readable in grey); spreads and errors use a
//! sequential light-to-dark red map; probabilities and signed labels use a blue-white-red
//! diverging map centred on the middle of the scale. Missing values are a neutral grey.

use plotters::style::RGBColor;

/// Grey used for missing (null or non-finite) values.
pub(crate) const MISSING: RGBColor = RGBColor(175, 175, 175);
/// Dark grey for reference lines.
pub(crate) const INK_GREY: RGBColor = RGBColor(90, 90, 90);
/// Light grey for cells outside the study region (no part of them is studied).
pub(crate) const OUTSIDE: RGBColor = RGBColor(214, 214, 214);
/// Near-white used for cells that carry no value by design (unobserved cells).
pub(crate) const BLANK: RGBColor = RGBColor(246, 246, 246);

/// Matplotlib's viridis sampled at 17 evenly spaced points.
const VIRIDIS: [u32; 17] = [
    0x440154, 0x48186a, 0x472d7b, 0x424086, 0x3b528b, 0x33638d, 0x2c728e, 0x26828e, 0x21918c,
    0x1fa088, 0x28ae80, 0x3fbc73, 0x5ec962, 0x84d44b, 0xaddc30, 0xd8e219, 0xfde725,
];

/// ColorBrewer "OrRd"-like sequential map, light (small) to dark red (large).
const SEQUENTIAL: [u32; 7] = [
    0xfff7ec, 0xfdd49e, 0xfdbb84, 0xfc8d59, 0xef6548, 0xd7301f, 0x990000,
];

/// ColorBrewer "RdBu" reversed: blue (low) - white - red (high).
const DIVERGING: [u32; 7] = [
    0x2166ac, 0x67a9cf, 0xd1e5f0, 0xf7f7f7, 0xfddbc7, 0xef8a62, 0xb2182b,
];

/// Tableau 10: distinct, colour-blind-friendlier line colours.
const PALETTE: [u32; 10] = [
    0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0xb07aa1, 0x76b7b2, 0x9c755f, 0xedc948, 0xff9da7,
    0xbab0ac,
];

/// The line colour of the `index`-th series (cycles after ten).
pub(crate) fn series_colour(index: usize) -> RGBColor {
    rgb(PALETTE[index % PALETTE.len()])
}

/// The colour of a 0xRRGGBB value.
fn rgb(hex: u32) -> RGBColor {
    let [_, r, g, b] = hex.to_be_bytes();
    RGBColor(r, g, b)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColourMap {
    Viridis,
    Sequential,
    Diverging,
}

impl ColourMap {
    fn stops(self) -> &'static [u32] {
        match self {
            ColourMap::Viridis => &VIRIDIS,
            ColourMap::Sequential => &SEQUENTIAL,
            ColourMap::Diverging => &DIVERGING,
        }
    }

    /// The colour at position `t` in [0, 1] (clamped), linearly interpolated between stops.
    pub(crate) fn at(self, t: f64) -> RGBColor {
        let stops = self.stops();
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let position = t * (stops.len() - 1) as f64;
        let lower = (position.floor() as usize).min(stops.len() - 2);
        let frac = position - lower as f64;
        let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * frac).round() as u8;
        let (a, b) = (rgb(stops[lower]), rgb(stops[lower + 1]));
        RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
    }
}

/// A value range mapped onto a colour map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scale {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) map: ColourMap,
}

impl Scale {
    /// A scale spanning the finite values given; a degenerate or empty range is widened so
    /// that the scale is always usable.
    pub(crate) fn spanning<'a>(
        values: impl IntoIterator<Item = &'a Option<f64>>,
        map: ColourMap,
    ) -> Self {
        let (lo, hi) = finite_range(values.into_iter().filter_map(|v| *v)).unwrap_or((0.0, 1.0));
        Scale::fixed(lo, hi, map)
    }

    /// A scale over `[lo, hi]`, widened when `lo == hi`.
    pub(crate) fn fixed(lo: f64, hi: f64, map: ColourMap) -> Self {
        if hi > lo {
            return Scale { lo, hi, map };
        }
        let pad = if lo == 0.0 { 0.5 } else { lo.abs() * 0.05 };
        Scale {
            lo: lo - pad,
            hi: hi + pad,
            map,
        }
    }

    pub(crate) fn colour(&self, value: Option<f64>) -> RGBColor {
        match value {
            Some(v) if v.is_finite() => self.map.at((v - self.lo) / (self.hi - self.lo)),
            _ => MISSING,
        }
    }
}

/// The (min, max) of the finite values, or `None` when there are none.
pub(crate) fn finite_range(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Relative luminance in [0, 1], to choose dark or light text over a colour.
pub(crate) fn luminance(colour: RGBColor) -> f64 {
    let RGBColor(r, g, b) = colour;
    (0.2126 * r as f64 + 0.7152 * g as f64 + 0.0722 * b as f64) / 255.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_maps_hit_their_end_stops_and_clamp() {
        assert_eq!(ColourMap::Viridis.at(0.0), RGBColor(0x44, 0x01, 0x54));
        assert_eq!(ColourMap::Viridis.at(1.0), RGBColor(0xfd, 0xe7, 0x25));
        assert_eq!(ColourMap::Viridis.at(7.0), ColourMap::Viridis.at(1.0));
        assert_eq!(ColourMap::Viridis.at(f64::NAN), ColourMap::Viridis.at(0.0));
        assert_eq!(ColourMap::Diverging.at(0.5), RGBColor(0xf7, 0xf7, 0xf7));
    }

    #[test]
    fn viridis_gets_lighter_along_the_scale() {
        let l: Vec<f64> = (0..=10)
            .map(|k| luminance(ColourMap::Viridis.at(k as f64 / 10.0)))
            .collect();
        assert!(l.windows(2).all(|w| w[1] > w[0]), "{l:?}");
    }

    #[test]
    fn scales_never_degenerate_and_grey_out_missing_values() {
        let s = Scale::spanning(&[Some(2.0), Some(2.0), None], ColourMap::Viridis);
        assert!(s.hi > s.lo);
        let empty = Scale::spanning(&[None, Some(f64::NAN)], ColourMap::Viridis);
        assert_eq!((empty.lo, empty.hi), (0.0, 1.0));
        assert_eq!(s.colour(None), MISSING);
        assert_eq!(s.colour(Some(f64::INFINITY)), MISSING);
    }
}
