//! "Did you mean ...?": the nearest valid name to a misspelt one, by edit distance.

/// Edit distance between two strings, by characters: insertions, deletions, substitutions and
/// swaps of two neighbours each count one (optimal string alignment, so `lenght` is one edit
/// from `length`).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// The candidate closest to `wrong`, if it is close enough to be a plausible typo: at most a
/// third of the longer name's characters differ (at least one edit is always allowed). Case
/// differences alone always count as close.
pub(crate) fn nearest<'a>(
    wrong: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = wrong.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (edit_distance(&lower, &c.to_lowercase()), c))
        .filter(|(distance, c)| {
            let longest = wrong.chars().count().max(c.chars().count());
            *distance <= (longest / 3).max(1)
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

/// "did you mean `x`?" for the nearest candidate, if any.
pub(crate) fn did_you_mean<'a>(
    wrong: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    nearest(wrong, candidates).map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("lenght_scale", "length_scale"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("é", "e"), 1);
    }

    #[test]
    fn nearest_suggests_plausible_typos_only() {
        let keys = ["grid", "kernel", "length_scale", "variance"];
        assert_eq!(nearest("lenght_scale", keys), Some("length_scale"));
        assert_eq!(nearest("Grid", keys), Some("grid"));
        assert_eq!(nearest("gird", keys), Some("grid"));
        assert_eq!(nearest("temperature", keys), None);
        assert_eq!(nearest("", keys), None);
    }
}
