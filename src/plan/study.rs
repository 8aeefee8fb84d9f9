//! A loaded study: the study file as read ([`crate::study`]) with every sweep point resolved by
//! its family. A [`Study`] that loads is fully checked — every sweep point resolved, every data
//! file read — so planning and running it cannot fail on its settings. It does not keep its
//! resolved points: [`Points`] resolves each again when asked for, so a large sweep costs the
//! memory of one point.

use std::path::Path;

use super::points::Points;
use crate::families;
use crate::study::{self, StudyError, StudyFile};

/// A loaded and fully validated study.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    /// The study file as read: headers, base settings, sweep axes, text and origin.
    pub file: StudyFile,
    /// Every point of the sweep product, first axis outermost, resolved on demand.
    pub points: Points,
}

impl Study {
    /// Jobs the study expands to: sweep points times replicates.
    pub(crate) fn job_count(&self) -> usize {
        self.points.len() * self.file.replicates as usize
    }
}

/// Read and validate the study at `path`.
pub fn load(path: &Path) -> Result<Study, StudyError> {
    validated(study::read(path, families::catalog())?)
}

/// Validate study `text`; `origin` names the file in messages, gives the default name, and is
/// the folder relative data paths resolve against.
pub fn parse(text: &str, origin: &Path) -> Result<Study, StudyError> {
    validated(study::read_text(text, origin, families::catalog())?)
}

/// The study of `file`, every sweep point resolved by its family.
fn validated(file: StudyFile) -> Result<Study, StudyError> {
    let points = Points::validated(
        file.source(),
        file.base.clone(),
        file.axes.clone(),
        file.folder(),
        file.kind,
    )?;
    Ok(Study { file, points })
}
