// fieldft — umbrella header.
#pragma once

#include "fieldft/config.hpp"
#include "fieldft/error.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/reference.hpp"
#include "fieldft/runtime.hpp"
