/* fieldft's FINUFFT-compatible options struct (libfieldft_finufft). The fields, their types and
 * their order are those documented for FINUFFT 2.5's finufft_opts (its C interface and options
 * pages), so that code written for FINUFFT compiles unchanged and a struct filled by such code
 * means the same here. How fieldft reads each field (used, accepted and ignored, or refused) is in
 * docs/dropin-c.md. */
#ifndef FINUFFT_OPTS_H
#define FINUFFT_OPTS_H

typedef struct finufft_opts {
  /* data handling */
  int modeord;           /* types 1, 2: 0 increasing (CMCL) mode order, 1 FFT order */
  int spreadinterponly;  /* types 1, 2: 1 = spread (type 1) or interpolate (type 2) only */
  /* diagnostics (accepted, ignored: fieldft prints nothing) */
  int debug;
  int spread_debug;
  int showwarn;
  /* performance */
  int nthreads;            /* OpenMP threads, 0 (or < 0) = all */
  int fftw;                /* FFTW planner flags: FFTW_ESTIMATE (64) estimates, others measure */
  int spread_sort;         /* accepted, ignored (fieldft always sorts) */
  int spread_kerevalmeth;  /* accepted, ignored (piecewise polynomial kernel always) */
  int spread_kerpad;       /* accepted, ignored */
  double upsampfac;        /* sigma: 0 automatic, else in [1.25, 2.25] */
  int spread_thread;       /* 0, 1 or 2 accepted (no effect); others refused */
  int maxbatchsize;        /* transforms processed together, 0 automatic */
  int spread_nthr_atomic;  /* accepted, ignored */
  int spread_max_sp_size;  /* accepted, ignored */
  int spread_kerformula;   /* 0 only (the exponential of semicircle kernel) */
  /* FFTW planner lock (both or neither; fieldft serialises its own FFTW planning) */
  void (*fftw_lock_fun)(void*);
  void (*fftw_unlock_fun)(void*);
  void* fftw_lock_data;
} finufft_opts;

#endif /* FINUFFT_OPTS_H */
