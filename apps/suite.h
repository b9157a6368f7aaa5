// Factories of the apps in the suite (one source file each); all_apps() lists them.
#pragma once

#include "apps/app.h"

namespace schedforge::apps {

std::unique_ptr<App> make_blur3x3();
std::unique_ptr<App> make_unsharp_mask();
std::unique_ptr<App> make_matmul();
std::unique_ptr<App> make_conv_relu();
std::unique_ptr<App> make_iir_blur();
std::unique_ptr<App> make_harris();
std::unique_ptr<App> make_stencil_chain();
std::unique_ptr<App> make_hist_equalize();
std::unique_ptr<App> make_max_filter();
std::unique_ptr<App> make_lens_blur();
std::unique_ptr<App> make_interpolate();
std::unique_ptr<App> make_resnet_block();
std::unique_ptr<App> make_camera_pipe();
std::unique_ptr<App> make_nl_means();
std::unique_ptr<App> make_bilateral_grid();
std::unique_ptr<App> make_local_laplacian();

} // namespace schedforge::apps
