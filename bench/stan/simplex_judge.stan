// Simplex Judge model in Stan: the same model as simplex_core.model.build_model (weight-propagation
// judge prior), for the speed benchmark (bench/speed.py) only. One program for every scale: the
// numbers of observed levels M and true levels T, omega, beta_max and delta are data, so it
// compiles once.
//
// For every included (judge j, candidate k) pair p (self-family pairs are simply not listed):
//   counts[p] ~ Multinomial(gamma_p),  gamma_p = pi_k^(j)' Theta_j   (Theta_j rows = true levels)
//   pi_k ~ Dirichlet(1) over the T true levels
//   random effects (use_re = 1, i.e. omega > 0): Z_k ~ Dirichlet(delta), R_j ~ Beta(omega J, J),
//     W_k ~ Beta(omega K, K), pi_k^(j) = (1 - W_k R_j) pi_k + W_k R_j Z_k;
//     use_re = 0 declares no random-effect parameters at all (pi_k^(j) = pi_k)
//   rho_j ~ Beta(1, 1); Theta_j[1, .] ~ Dirichlet(1 + rho_j beta_max on the first row's correct cell)
//   weight propagation: node (t, m2), m2 < M, has edges to (t + 1, m2 .. M) with weights
//     alpha ~ Dirichlet(1 + rho_j beta_max on the edge into the correct cell of row t + 1, if that
//     cell is a child); node (t, M) passes all its mass to (t + 1, M);
//     Theta_j[t + 1, m2'] = sum_{m2 <= m2'} Theta_j[t, m2] alpha_{(t, m2) -> (t + 1, m2')}.
//
// The node simplexes have different sizes (M - m2 + 1), which one Stan array of `simplex` cannot
// hold, so they are built from one unconstrained vector with Stan's own stick-breaking transform
// (exactly stan::math::simplex_constrain of Stan 2.35, the version httpstan 4.13 ships) and its
// log-Jacobian: the same density and the same unconstrained geometry as declaring them `simplex`.
functions {
  vector stick_breaking_lp(vector y) {
    int Km1 = rows(y);
    vector[Km1 + 1] x;
    real stick_len = 1;
    for (k in 1:Km1) {
      real adj = y[k] - log(Km1 - k + 1);
      real z = inv_logit(adj);
      x[k] = stick_len * z;
      target += log(stick_len) + log_inv_logit(adj) + log1m_inv_logit(adj);
      stick_len -= x[k];
    }
    x[Km1 + 1] = stick_len;
    return x;
  }
}
data {
  int<lower=1> J;
  int<lower=2> K;
  int<lower=2> M;                       // observed levels
  int<lower=2, upper=M> T;              // true levels
  int<lower=1> P;                       // included (judge, candidate) pairs
  array[P] int<lower=1, upper=J> pair_j;
  array[P] int<lower=1, upper=K> pair_k;
  array[P, M] int<lower=0> counts;
  vector[T] true_values;
  array[T] int<lower=1, upper=M> correct;   // observed position of each true level (1-based)
  real<lower=0> beta_max;
  real<lower=0> omega;
  vector<lower=0>[T] delta;
  int<lower=0, upper=1> use_re;
}
transformed data {
  // unconstrained coordinates per (judge, transition): node m2 < M has M - m2 edges' worth
  int n_edge = (M * (M - 1)) %/% 2;
  vector[M] first_boost = rep_vector(0, M);
  first_boost[correct[1]] = 1;
}
parameters {
  array[K] simplex[T] pi;
  vector<lower=0, upper=1>[J] rho;
  array[J] simplex[M] theta_first_row;
  array[J, T - 1] vector[n_edge] edge_raw;
  array[use_re ? K : 0] simplex[T] Z;
  vector<lower=0, upper=1>[use_re ? J : 0] R;
  vector<lower=0, upper=1>[use_re ? K : 0] W;
}
transformed parameters {
  array[J] matrix[T, M] theta;
  real edge_prior = 0;   // log Dirichlet densities of the edge weights
  for (j in 1:J) {
    real s = rho[j] * beta_max;
    theta[j] = rep_matrix(0, T, M);
    theta[j][1] = theta_first_row[j]';
    for (t in 1:(T - 1)) {
      int pos = 1;
      int target_cell = correct[t + 1];
      // node M passes all its mass to (t + 1, M)
      theta[j][t + 1, M] += theta[j][t, M];
      for (m2 in 1:(M - 1)) {
        int d = M - m2 + 1;
        vector[d] conc = rep_vector(1, d);
        vector[d] alpha = stick_breaking_lp(segment(edge_raw[j, t], pos, d - 1));
        pos += d - 1;
        if (target_cell >= m2) conc[target_cell - m2 + 1] += s;
        edge_prior += dirichlet_lpdf(alpha | conc);
        for (i in 1:d) theta[j][t + 1, m2 + i - 1] += theta[j][t, m2] * alpha[i];
      }
    }
  }
}
model {
  for (k in 1:K) pi[k] ~ dirichlet(rep_vector(1, T));
  rho ~ beta(1, 1);
  for (j in 1:J) theta_first_row[j] ~ dirichlet(1 + rho[j] * beta_max * first_boost);
  target += edge_prior;
  if (use_re) {
    for (k in 1:K) Z[k] ~ dirichlet(delta);
    R ~ beta(omega * J, J);
    W ~ beta(omega * K, K);
  }
  for (p in 1:P) {
    int j = pair_j[p];
    int k = pair_k[p];
    vector[T] pk = pi[k];
    if (use_re) {
      real mix = W[k] * R[j];
      pk = (1 - mix) * pi[k] + mix * Z[k];
    }
    counts[p] ~ multinomial((pk' * theta[j])');
  }
}
generated quantities {
  vector[K] expected_score;
  for (k in 1:K) expected_score[k] = dot_product(pi[k], true_values);
}
