import { describeEdgeOf } from './edge';

// Its 72 MB frame decoded in a window of rows, to a resized WebP and a full-size JPEG.
describeEdgeOf('avif-24mp.avif', ['resize to 1600 px webp', 'convert to jpg']);
