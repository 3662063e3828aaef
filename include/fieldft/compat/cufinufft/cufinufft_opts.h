/* fieldft's cuFINUFFT-compatible options struct (libfieldft_cufinufft). The fields, their types
 * and their order are those documented for cuFINUFFT 2.5's cufinufft_opts, so that code written
 * for cuFINUFFT compiles unchanged. How fieldft reads each field: docs/dropin-c.md. */
#ifndef CUFINUFFT_OPTS_H
#define CUFINUFFT_OPTS_H

typedef struct cufinufft_opts {
  double upsampfac;          /* sigma: 0 automatic, else in [1.25, 2.25] */
  int gpu_method;            /* 0 auto, 1 points-driven, 2 subproblems, 3 output-driven */
  int gpu_sort;              /* accepted, ignored (fieldft always sorts) */
  int gpu_binsizex;          /* bin size in fine-grid cells; <= 0 automatic */
  int gpu_binsizey;
  int gpu_binsizez;
  int gpu_obinsizex;         /* accepted, ignored */
  int gpu_obinsizey;
  int gpu_obinsizez;
  int gpu_maxsubprobsize;    /* accepted, ignored */
  int gpu_kerevalmeth;       /* accepted, ignored (piecewise polynomial kernel always) */
  int gpu_spreadinterponly;  /* 1 = spread (type 1) or interpolate (type 2) only */
  int gpu_maxbatchsize;      /* transforms processed together; <= 0 automatic */
  int gpu_device_id;         /* CUDA device ordinal */
  void* gpu_stream;          /* cudaStream_t; NULL: the legacy default stream */
  int modeord;               /* types 1, 2: 0 increasing, 1 FFT order */
  int gpu_np;                /* accepted, ignored */
  int debug;                 /* accepted, ignored */
} cufinufft_opts;

#endif /* CUFINUFFT_OPTS_H */
