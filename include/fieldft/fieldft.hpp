// fieldft — umbrella header.
#pragma once

#include "fieldft/config.hpp"
#include "fieldft/context.hpp"
#include "fieldft/dist.hpp"
#include "fieldft/error.hpp"
#include "fieldft/mri/dft.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "fieldft/reference.hpp"
#include "fieldft/runtime.hpp"
