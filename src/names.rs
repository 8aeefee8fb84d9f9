//! Closed sets of names: every word a study can give for a kind (samplers, likelihoods,
//! kernels, data sources, study kinds, ...) is a Rust enum declared once with
//! [`closed_names!`], and parsed into it once, at validation. Nothing downstream matches on
//! strings, and there is no `_ =>` branch that turns an unknown name into a default.

/// An enum of words: what [`closed_names!`] declares.
pub(crate) trait ClosedNames: Copy + 'static {
    /// The words, in declaration order.
    const WORDS: &'static [&'static str];
    /// The variant written as `word`, if any.
    fn parse(word: &str) -> Option<Self>;
}

/// Declare an enum whose variants are written as fixed words in study files and tables.
/// (The module is crate-private, so the example is checked by the unit test below.)
///
/// ```ignore
/// crate::closed_names! {
///     /// A colour.
///     pub enum Colour {
///         /// The first.
///         Red = "red",
///         Green = "green",
///     }
/// }
/// assert_eq!(Colour::from_name("green"), Some(Colour::Green));
/// assert_eq!(Colour::NAMES, &["red", "green"]);
/// assert_eq!(Colour::Red.name(), "red");
/// ```
#[macro_export]
macro_rules! closed_names {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every variant, in declaration order.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The words, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($word),+];

            /// The word for this variant.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }

            /// The variant written as `word`, if any.
            pub fn from_name(word: &str) -> Option<Self> {
                match word {
                    $($word => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl $crate::names::ClosedNames for $name {
            const WORDS: &'static [&'static str] = $name::NAMES;
            fn parse(word: &str) -> Option<Self> {
                $name::from_name(word)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::closed_names! {
        /// A colour.
        pub enum Colour {
            /// The first.
            Red = "red",
            Green = "green",
        }
    }

    #[test]
    fn a_declared_enum_parses_and_names_its_words() {
        assert_eq!(Colour::from_name("green"), Some(Colour::Green));
        assert_eq!(Colour::from_name("blue"), None);
        assert_eq!(Colour::NAMES, &["red", "green"]);
        assert_eq!(Colour::Red.name(), "red");
        assert_eq!(Colour::ALL, &[Colour::Red, Colour::Green]);
    }
}
