# session 38, call E (call D again, the tuner now isolating the input channels-last as the program stores it): the UNet's innermost-level 3 x 3 convolution (512 -> 512 over 8 x 16 x 16, 128 work items of the
# default's tile) and its 32 x 32 counterpart tuned alone over the whole conv space, input channels-last as in the
# UNet: does a grid of more, smaller work items beat the default's one wave?
TUNE_TAG=session38e bash bench/kernels/s38d.sh
