// fieldft — umbrella header.
#pragma once

#include "fieldft/config.hpp"
#include "fieldft/error.hpp"
#include "fieldft/mri/dft.hpp"
#include "fieldft/mri/linear_operator.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/reference.hpp"
#include "fieldft/runtime.hpp"
