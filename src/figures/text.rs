//! Text and the drawing basics every figure shares: the embedded DejaVu Sans (compiled into the
//! binary, so no system font is needed), the ink colour, and [`Label`], text drawn straight from
//! the font with ab_glyph: titles, axis titles, legends, colour-bar labels and cell annotations.
//!
//! plotters' own ab_glyph path drops each glyph's side bearing and places glyphs by their ink
//! box instead of the baseline, so words come out unevenly spaced ("m ean") and letters such as
//! "x" float. Here glyphs are positioned on the baseline with their bearings and kerning; only
//! the numeric tick labels are left to plotters (digits share their metrics, so they look fine),
//! through the font registered by [`register_fonts`].

use std::error::Error;
use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, GlyphId, PxScale, ScaleFont, point};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::ReportError;

const REGULAR: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
const BOLD: &[u8] = include_bytes!("../../assets/DejaVuSans-Bold.ttf");
/// The family name the embedded font is registered under for plotters' tick labels.
const FONT: &str = "sans-serif";
/// Colour of all text and axes.
pub(crate) const INK: RGBColor = RGBColor(34, 34, 34);

pub(crate) type DrawResult<T = ()> = Result<T, Box<dyn Error>>;
pub(crate) type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// Registers the embedded font with plotters once per process.
pub(crate) fn register_fonts() -> Result<(), ReportError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, REGULAR).is_ok()
            && plotters::style::register_font(FONT, FontStyle::Bold, BOLD).is_ok()
    });
    if ok { Ok(()) } else { Err(ReportError::Font) }
}

/// plotters' text style for tick labels (numbers), `size` pixels.
pub(crate) fn tick_style(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&INK)
}

fn font(bold: bool) -> Option<&'static FontRef<'static>> {
    static FONTS: OnceLock<(Option<FontRef<'static>>, Option<FontRef<'static>>)> = OnceLock::new();
    let (regular, bold_font) = FONTS.get_or_init(|| {
        (
            FontRef::try_from_slice(REGULAR).ok(),
            FontRef::try_from_slice(BOLD).ok(),
        )
    });
    if bold {
        bold_font.as_ref()
    } else {
        regular.as_ref()
    }
}

/// How a piece of text is drawn and anchored.
#[derive(Clone, Copy)]
pub(crate) struct Label {
    size: f32,
    bold: bool,
    colour: RGBColor,
    h: HPos,
    v: VPos,
    /// Rotated to read bottom-to-top (for vertical axis titles).
    vertical: bool,
}

impl Label {
    /// Regular ink-coloured text of `size` pixels, centred on its anchor.
    pub(crate) fn new(size: f32) -> Self {
        Label {
            size,
            bold: false,
            colour: INK,
            h: HPos::Center,
            v: VPos::Center,
            vertical: false,
        }
    }

    pub(crate) fn bold(self) -> Self {
        Label { bold: true, ..self }
    }

    pub(crate) fn colour(self, colour: RGBColor) -> Self {
        Label { colour, ..self }
    }

    /// Where the anchor point sits on the text box (along the reading direction, across it).
    pub(crate) fn anchor(self, h: HPos, v: VPos) -> Self {
        Label { h, v, ..self }
    }

    pub(crate) fn vertical(self) -> Self {
        Label {
            vertical: true,
            ..self
        }
    }

    /// Each glyph of `text` with its caret position along the baseline (kerning applied),
    /// and the advance width of the whole text.
    fn layout(&self, font: &FontRef, text: &str) -> (Vec<(GlyphId, f32)>, f32) {
        let scaled = font.as_scaled(PxScale::from(self.size));
        let mut caret = 0.0;
        let mut previous = None;
        let mut glyphs = Vec::new();
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = previous {
                caret += scaled.kern(p, id);
            }
            glyphs.push((id, caret));
            caret += scaled.h_advance(id);
            previous = Some(id);
        }
        (glyphs, caret)
    }

    /// The advance width of `text` in pixels.
    pub(crate) fn width(&self, text: &str) -> f32 {
        font(self.bold).map_or(0.0, |font| self.layout(font, text).1)
    }

    /// Draws `text` with its anchor at pixel `at` in `area`'s own coordinates (absolute pixels
    /// when `area` is the root).
    pub(crate) fn draw(&self, area: &Area, text: &str, at: (i32, i32)) -> DrawResult {
        let Some(font) = font(self.bold) else {
            return Ok(());
        };
        let scale = PxScale::from(self.size);
        let scaled = font.as_scaled(scale);
        let (ascent, descent) = (scaled.ascent(), scaled.descent());
        let (glyphs, width) = self.layout(font, text);
        let along = match self.h {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let across = match self.v {
            VPos::Top => 0.0,
            VPos::Center => -(ascent - descent) / 2.0,
            VPos::Bottom => -(ascent - descent),
        };
        for (id, caret) in glyphs {
            let glyph = id.with_scale_and_position(scale, point(caret, ascent));
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            let mut pixels = Vec::new();
            outline.draw(|gx, gy, coverage| {
                if coverage > 0.02 {
                    // Whole-pixel offsets only: rounding each fractional sum on its own
                    // would skip a row or column where the sum crosses zero.
                    let lx = bounds.min.x.floor() as i32 + gx as i32 + along.round() as i32;
                    let ly = bounds.min.y.floor() as i32 + gy as i32 + across.round() as i32;
                    pixels.push((lx, ly, coverage));
                }
            });
            for (lx, ly, coverage) in pixels {
                let (x, y) = if self.vertical {
                    (at.0 + ly, at.1 - lx)
                } else {
                    (at.0 + lx, at.1 + ly)
                };
                area.draw_pixel((x, y), &self.colour.mix(f64::from(coverage.min(1.0))))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_fonts_load_and_measure_text() {
        assert!(font(false).is_some() && font(true).is_some());
        let label = Label::new(20.0);
        let short = label.width("mean");
        assert!(short > 20.0 && short < 80.0, "{short}");
        assert!(label.width("mean mean") > 2.0 * short);
        assert!(label.bold().width("mean") >= short);
        assert_eq!(label.width(""), 0.0);
    }
}
