# Cross-compiling glassbox for Debian 12 arm64 (aarch64) on an x86-64 Debian 12 host, with
# Debian's multiarch packages: crossbuild-essential-arm64 and the :arm64 dev packages of
# scripts/setup.sh's dependencies (scripts/test_arm64.sh installs them and runs the result
# under qemu-aarch64). Usage:
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
#
# Two dev packages cannot be co-installed with their amd64 twins (their Multi-Arch: same
# files differ): libdnnl-dev (/usr/include/oneapi/dnnl/dnnl_config.h: amd64 is built with the
# OpenCL GPU runtime, arm64 without) and libonnx-dev (its dependency libonnxifi ships
# /usr/lib/libonnxifi.so outside the multiarch directory). scripts/test_arm64.sh unpacks their
# arm64 .debs into GLASSBOX_ARM64_EXTRA (default build-arm64-deps/, git-ignored), searched first.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(GLASSBOX_TRIPLET aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${GLASSBOX_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${GLASSBOX_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${GLASSBOX_TRIPLET})

if(NOT DEFINED GLASSBOX_ARM64_EXTRA)
  set(GLASSBOX_ARM64_EXTRA "${CMAKE_CURRENT_LIST_DIR}/../build-arm64-deps")
endif()
get_filename_component(GLASSBOX_ARM64_EXTRA "${GLASSBOX_ARM64_EXTRA}" ABSOLUTE)
set(GLASSBOX_ARM64_EXTRA "${GLASSBOX_ARM64_EXTRA}" CACHE PATH "unpacked arm64 dev packages that multiarch cannot co-install")
# Headers: the unpacked arm64 ones (dnnl_config.h) before /usr/include.
include_directories(BEFORE SYSTEM "${GLASSBOX_ARM64_EXTRA}/usr/include")
# Libraries: the arm64 multiarch directory (and the unpacked dev links), never the host's.
list(PREPEND CMAKE_PREFIX_PATH "${GLASSBOX_ARM64_EXTRA}/usr")
list(APPEND CMAKE_LIBRARY_PATH "${GLASSBOX_ARM64_EXTRA}/usr/lib/${GLASSBOX_TRIPLET}" "/usr/lib/${GLASSBOX_TRIPLET}")
set(CMAKE_IGNORE_PATH "/usr/lib/x86_64-linux-gnu" "/lib/x86_64-linux-gnu")
link_directories("/usr/lib/${GLASSBOX_TRIPLET}")

# pkg-config: the arm64 .pc files (and the architecture-independent ones) only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${GLASSBOX_TRIPLET}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Host programs (protoc, python3) from the host; ctest runs target binaries under qemu-aarch64.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
find_program(GLASSBOX_QEMU_AARCH64 qemu-aarch64)
if(GLASSBOX_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${GLASSBOX_QEMU_AARCH64}")  # the multiarch loader /lib/ld-linux-aarch64.so.1 (libc6:arm64)
endif()
