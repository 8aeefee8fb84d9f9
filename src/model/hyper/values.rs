//! The hyperparameters a study may infer, and their values at one point of a chain.

crate::closed_names! {
    /// The hyperparameters a study can infer, in the order of every table.
    pub enum HyperName {
        /// The kernel's length scale l (along x when the kernel has one per axis).
        LengthScale = "length_scale",
        /// The length scale along y of an anisotropic (ARD) kernel.
        LengthScaleY = "length_scale_y",
        /// The kernel's (marginal) variance.
        Variance = "variance",
        /// The field's constant mean (the intercept).
        Mean = "mean",
        /// The gaussian likelihood's noise sd (the nugget's square root).
        NoiseSd = "noise_sd",
    }
}

/// The values of the hyperparameters at one point of a chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hyperparameters {
    pub(crate) length_scale: f64,
    /// Along y, when it differs from `length_scale` (`None`: isotropic, y follows x).
    pub(crate) length_scale_y: Option<f64>,
    pub(crate) variance: f64,
    pub(crate) mean: f64,
    /// The gaussian likelihood's noise sd (the value the likelihood holds unless inferred).
    pub(crate) noise_sd: f64,
}

impl Hyperparameters {
    pub(crate) fn get(&self, name: HyperName) -> f64 {
        match name {
            HyperName::LengthScale => self.length_scale,
            HyperName::LengthScaleY => self.length_scale_y.unwrap_or(self.length_scale),
            HyperName::Variance => self.variance,
            HyperName::Mean => self.mean,
            HyperName::NoiseSd => self.noise_sd,
        }
    }

    pub(crate) fn set(&mut self, name: HyperName, value: f64) {
        match name {
            HyperName::LengthScale => self.length_scale = value,
            HyperName::LengthScaleY => self.length_scale_y = Some(value),
            HyperName::Variance => self.variance = value,
            HyperName::Mean => self.mean = value,
            HyperName::NoiseSd => self.noise_sd = value,
        }
    }
}
