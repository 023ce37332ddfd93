import { describeEdgeOf } from './edge';

// A 48 MP lossy WebP decoded in bands to JPEG's packed encoder, and to WebP's own.
describeEdgeOf('webp-48mp.webp', ['convert to jpg', 'convert to webp']);
