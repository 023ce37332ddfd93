import { describeEdgeOf } from './edge';

// Unpacked, its coefficients alone are 72 MB; the decoder's low-memory mode packs them.
describeEdgeOf('jpeg-24mp-progressive.jpg');
