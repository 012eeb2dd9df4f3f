// tensoracle: differential campaigns against real runtimes (optional part:
// the ONNX part's dependencies; POSIX processes): backends, the campaign,
// support probing, reduction and reports. Includes <tensoracle/onnx.hpp>.
#pragma once

#include "tensoracle/onnx.hpp"

#include "tensoracle/campaign/backend.hpp"
#include "tensoracle/campaign/campaign.hpp"
#include "tensoracle/campaign/corpus.hpp"
#include "tensoracle/campaign/probe.hpp"
#include "tensoracle/campaign/process.hpp"
#include "tensoracle/campaign/reduce.hpp"
#include "tensoracle/campaign/report.hpp"
