//! The exact two-sided sign test: whether a split of discordant pairs (tasks one side
//! solved and the other did not) is more uneven than chance makes likely.

/// The exact two-sided sign test of `x` against `y` discordant pairs: the probability,
/// with each pair equally likely to fall either way, of a split at least as uneven.
pub fn sign_test(x: usize, y: usize) -> f64 {
    let n = x + y;
    if n == 0 {
        return 1.0;
    }
    let k = x.min(y);
    let choose = |n: usize, k: usize| (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64);
    let tail: f64 = (0..=k).map(|i| choose(n, i)).sum::<f64>() / 2f64.powi(n as i32);
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 0 against 2 is P = 2 × (1/4) = 0.5; 0 against 6 is 2/64 = 0.03125.
    #[test]
    fn the_sign_test_is_exact() {
        assert_eq!(sign_test(0, 2), 0.5);
        assert_eq!(sign_test(6, 0), 0.03125);
        assert_eq!(sign_test(3, 3), 1.0);
        assert_eq!(sign_test(0, 0), 1.0);
    }
}
