import { describeEdgeOf } from './edge';

// A 48 MP lossy WebP decoded in bands, to JPEG's packed encoder.
describeEdgeOf('webp-48mp.webp', ['convert to jpg']);
