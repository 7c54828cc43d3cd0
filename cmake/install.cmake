# The installed package (docs/architecture.md, "Installed package"): `cmake --install build --prefix P`.
#   P/include/tcsolve/...        public headers (no HDF5, CUDA or cuBLAS header among them), tcsolve.h
#   P/<libdir>/libtcsolve_{runtime,gemm,solver,io}.so.*, libtcsolve.so.*    shared libraries with SOVERSION
#   P/bin/tcsolve                the executable
#   P/<libdir>/cmake/tcsolve/    tcsolveConfig.cmake, tcsolveConfigVersion.cmake, tcsolveTargets*.cmake
#   P/<libdir>/pkgconfig/tcsolve.pc    for C users of tcsolve.h
#   P/share/doc/tcsolve/LICENSE  the licence (BSD-3-Clause), also named in tcsolve.pc, the CMake
#                                package (tcsolve_LICENSE) and the Python package (__license__)
include(CMakePackageConfigHelpers)

set(tcsolve_libraries tcsolve_runtime tcsolve_gemm tcsolve_solver tcsolve_io tcsolve_capi)
install(TARGETS ${tcsolve_libraries} EXPORT tcsolveTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tcsolve RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Public headers: each library's include/ (internal headers live under src/ or internal/).
# tcsolve_mpi.h (the distributed C API) only in a build with MPI, whose library implements it.
set(tcsolve_header_exclude)
if(NOT TCSOLVE_HAVE_MPI)
  set(tcsolve_header_exclude PATTERN tcsolve_mpi.h EXCLUDE)
endif()
install(DIRECTORY runtime/include/ gemm/include/ solver/include/ solver/io/include/ capi/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${tcsolve_header_exclude})
install(FILES ${PROJECT_BINARY_DIR}/include/tcsolve/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tcsolve)

set(tcsolve_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tcsolve)
install(EXPORT tcsolveTargets NAMESPACE tcsolve:: DESTINATION ${tcsolve_cmake_dir})
configure_package_config_file(cmake/tcsolveConfig.cmake.in ${PROJECT_BINARY_DIR}/tcsolveConfig.cmake
  INSTALL_DESTINATION ${tcsolve_cmake_dir})
# 0.x: a minor release may break the interface, so 0.3 accepts 0.3.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tcsolveConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tcsolveConfig.cmake ${PROJECT_BINARY_DIR}/tcsolveConfigVersion.cmake
        DESTINATION ${tcsolve_cmake_dir})

# tcsolve.pc, relocatable: the prefix is found from the file's own directory.
file(RELATIVE_PATH TCSOLVE_PC_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" TCSOLVE_PC_PREFIX "${TCSOLVE_PC_PREFIX}")
configure_file(cmake/tcsolve.pc.in ${PROJECT_BINARY_DIR}/tcsolve.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tcsolve.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The licence beside the package (BSD-3-Clause, LICENSE at the top of the tree).
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/tcsolve)
