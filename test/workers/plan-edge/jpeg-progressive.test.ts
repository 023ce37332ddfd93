import { describeEdgeOf } from './edge';

// Unpacked, its coefficients alone are 72 MB; the decoder's low-memory mode packs them, beside WebP's and AVIF's encoders.
describeEdgeOf('jpeg-24mp-progressive.jpg', ['convert to webp', 'convert to avif']);
